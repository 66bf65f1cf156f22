# R's leaps::regsubsets, forward selection, the whole path over every candidate: the peer of
# yosoku's stepwise benchmark (BENCHMARKS.md). Called by tools/bench/peers.py with the directory
# holding x.f64 (column-major n x p doubles) and y.f64, n and p.
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
n <- as.integer(args[2])
p <- as.integer(args[3])
x <- matrix(readBin(file.path(dir, "x.f64"), "double", n * p), nrow = n, ncol = p)
y <- readBin(file.path(dir, "y.f64"), "double", n)
suppressPackageStartupMessages(library(leaps))
times <- numeric(5)
for (k in seq_along(times)) {
  t <- system.time(fit <- regsubsets(x, y, nvmax = p, method = "forward"))
  times[k] <- t[["elapsed"]]
}
s <- summary(fit)
stopifnot(length(s$adjr2) == p)
cat(sprintf("R %s leaps %s regsubsets forward, full path %8.1f ms (median of %d)\n",
            getRversion(), packageVersion("leaps"), 1000 * median(times), length(times)))
