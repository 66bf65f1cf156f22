; yosoku's input for meep (FDTD, Debian's meep-openmpi): a 2-D dielectric waveguide with a bend,
; driven by a continuous source, for `steps` time steps. Written for yosoku's MPI prediction
; experiment (cargo xtask mpi-experiment apps); run as `mpirun -np 2 meep steps=200 waveguide.ctl`.
(define-param res 40)     ; pixels per unit length: time step 0.5 / res (Courant 0.5)
(define-param steps 200)  ; time steps to run
(set! geometry-lattice (make lattice (size 16 16 no-size)))
(set! geometry (list
  (make block (center -2 -3.5) (size 12 1 infinity) (material (make dielectric (epsilon 12))))
  (make block (center 3.5 2) (size 1 12 infinity) (material (make dielectric (epsilon 12))))))
(set! pml-layers (list (make pml (thickness 1.0))))
(set! resolution res)
(set! sources (list (make source (src (make continuous-src (wavelength (* 2 (sqrt 11))) (width 20)))
                             (component Ez) (center -7 -3.5) (size 0 1))))
(run-until (/ steps (* 2 res)))
