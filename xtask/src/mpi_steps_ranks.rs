//! `cargo xtask mpi-experiment steps-ranks`: the data of `mpi_steps_and_ranks` (docs/methods.md,
//! section 3, "More steps and more ranks at once") measured on this machine, never
//! oversubscribed: short runs of himeno_mpi and meep over five input sizes on the given rank
//! counts (each at most the machine's cores), and the run to predict, at a larger input, more
//! steps and the target rank count, each several times, repeat by repeat. The logs go gzipped
//! into DIR/<program>/short/ and DIR/<program>/target/, then pipelines/mpi-steps-and-ranks.toml
//! runs on them (its rank count and parameters set to the experiment's).
//!
//! On this project's 2-core VM the one rank count that is not oversubscribed at both ends is 2
//! (the default: one rank per core), so the rank axis is not modelled there; on a machine of 16
//! cores `--ranks 1,2,4,8 --target-ranks 16` models it and predicts 16 ranks.

use anyhow::{Context, Result, bail};

use crate::mpi_scaling::{PROGRAMS, Program, Run, measure, prepare, program_path};
use crate::target_dir;

/// What each program's experiment measures beyond the scaling experiment's sizes.
struct Plan {
    program: &'static str,
    /// Steps (himeno: iterations, meep: time steps) of the short runs.
    short_steps: u32,
    /// The run to predict: its size and its steps.
    target_size: u32,
    target_steps: u32,
}

const PLANS: [Plan; 2] = [
    Plan {
        program: "himeno",
        short_steps: 20,
        target_size: 129,
        target_steps: 400,
    },
    Plan {
        program: "meep",
        short_steps: 50,
        target_size: 80,
        target_steps: 500,
    },
];

const USAGE: &str = "usage: cargo xtask mpi-experiment steps-ranks [--repeats N] [--into DIR] [--only himeno|meep] [--ranks 1,2,4,8] [--target-ranks 16] [--prebuilt]";

/// The rank counts: `--ranks` and `--target-ranks` taken out of `args`, the rest returned.
fn rank_args(args: &[String], cores: u32) -> Result<(Vec<u32>, u32, Vec<String>)> {
    let (mut ranks, mut target, mut rest) = (vec![cores], cores, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = |it: &mut std::slice::Iter<'_, String>| {
            it.next().with_context(|| USAGE.to_owned()).cloned()
        };
        let count = |v: &str| -> Result<u32> {
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| (1..=cores).contains(&n))
                .with_context(|| {
                    format!("rank count `{v}`: expected 1 to {cores} (this machine's cores; the experiment is never oversubscribed)")
                })
        };
        match a.as_str() {
            "--ranks" => {
                ranks = value(&mut it)?
                    .split(',')
                    .map(count)
                    .collect::<Result<_>>()?;
            }
            "--target-ranks" => target = count(&value(&mut it)?)?,
            _ => rest.push(a.clone()),
        }
    }
    Ok((ranks, target, rest))
}

/// `cargo xtask mpi-experiment steps-ranks ...`.
pub fn experiment(args: &[String]) -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let (ranks, target_ranks, rest) = rank_args(args, cores)?;
    let parsed = crate::mpi_apps::ExperimentArgs::parse(&rest, USAGE)?;
    let chosen: Vec<(&Program, &Plan)> = PROGRAMS
        .iter()
        .filter_map(|p| PLANS.iter().find(|x| x.program == p.name).map(|x| (p, x)))
        .filter(|(p, _)| parsed.only.as_deref().is_none_or(|o| o == p.name))
        .collect();
    if chosen.is_empty() {
        bail!(
            "--only: no program `{}`; {USAGE}",
            parsed.only.unwrap_or_default()
        );
    }
    let tools = prepare(
        &chosen.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        parsed.prebuilt,
    )?;
    let work = target_dir().join("mpi-experiment/steps-ranks");
    let data = parsed
        .into
        .unwrap_or_else(|| work.join("data/mpi-steps-and-ranks"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    for (p, plan) in &chosen {
        let dir = data.join(p.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
        }
        let program = program_path(p, &tools)?;
        for repeat in 1..=parsed.repeats {
            for &size in p.sizes {
                for &r in &ranks {
                    let logs = dir.join(format!("short/{}{size}-{r}ranks-{repeat}", p.parameter));
                    let run = Run {
                        size,
                        steps: plan.short_steps,
                        ranks: r,
                        repeat,
                    };
                    measure(&work, &tools, (p, &program), &run, &logs)?;
                }
            }
            let size = plan.target_size;
            let logs = dir.join(format!(
                "target/{}{size}-{target_ranks}ranks-{repeat}",
                p.parameter
            ));
            let run = Run {
                size,
                steps: plan.target_steps,
                ranks: target_ranks,
                repeat,
            };
            measure(&work, &tools, (p, &program), &run, &logs)?;
        }
        write_environment(&dir, p, plan, (&ranks, target_ranks), parsed.repeats)?;
    }
    let pipeline = pipeline_for(&ranks, target_ranks)?;
    let file = work.join("mpi-steps-and-ranks.toml");
    std::fs::create_dir_all(&work)?;
    std::fs::write(&file, pipeline)?;
    crate::mpi_apps::run_on_new_data_in(&file, "data/mpi-steps-and-ranks/", &data, &work)?;
    println!("\nlogs: {}", data.display());
    Ok(())
}

/// The bundled pipeline with this experiment's rank counts: the target's, and `ranks` among
/// the parameters modelled where the short runs vary it.
fn pipeline_for(ranks: &[u32], target_ranks: u32) -> Result<String> {
    let text =
        std::fs::read_to_string(crate::repo_root().join("pipelines/mpi-steps-and-ranks.toml"))?;
    let varied = ranks.len() >= 3;
    let mut text = text.replace("ranks = 2 }", &format!("ranks = {target_ranks} }}"));
    if varied {
        for parameter in ["\"n\"", "\"res\""] {
            text = text.replace(
                &format!("parameters = [{parameter}]"),
                &format!("parameters = [{parameter}, \"ranks\"]"),
            );
        }
    }
    Ok(text)
}

/// `environment.txt` beside a program's logs: what ran, where, when.
fn write_environment(
    dir: &std::path::Path,
    p: &Program,
    plan: &Plan,
    (ranks, target_ranks): (&[u32], u32),
    repeats: u32,
) -> Result<()> {
    let output = crate::mpi_apps::command_output;
    let sizes: Vec<String> = p.sizes.iter().map(u32::to_string).collect();
    let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
    let version = crate::mpi_scaling::program_version(p);
    let text = format!(
        "program: {} ({version})\nopen mpi: {}\nshort runs: {} = {}, {} steps, ranks {} (--bind-to core, never more ranks than cores)\ntarget: {} = {}, {} steps, {target_ranks} ranks\nrepeats: {repeats} of each, repeat by repeat; OMP_NUM_THREADS=1\nmachine: {} vCPUs, {}\nmeasured: {}\ncommand: cargo xtask {}\n",
        p.name,
        crate::mpi_apps::open_mpi_version(),
        p.parameter,
        sizes.join(", "),
        plan.short_steps,
        ranks.join(", "),
        p.parameter,
        plan.target_size,
        plan.target_steps,
        output("nproc", &[]),
        crate::mpi_apps::cpu_model().trim(),
        output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
        crate::mpi_apps::xtask_command(),
    );
    std::fs::write(dir.join("environment.txt"), text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On 16 cores the bundled pipeline models the rank axis too and predicts 16 ranks; on 2 it
    /// stays at 2 ranks, the size alone modelled; a rank count past the cores is refused.
    #[test]
    fn the_pipeline_follows_the_rank_counts_and_never_oversubscribes() {
        let on16 = pipeline_for(&[1, 2, 4, 8], 16).unwrap();
        assert!(on16.contains("target = { n = 129, ranks = 16 }"), "{on16}");
        assert!(on16.contains("target = { res = 80, ranks = 16 }"), "{on16}");
        assert!(on16.contains("parameters = [\"n\", \"ranks\"]"), "{on16}");
        assert!(on16.contains("parameters = [\"res\", \"ranks\"]"), "{on16}");
        let on2 = pipeline_for(&[2], 2).unwrap();
        assert!(on2.contains("parameters = [\"n\"]\n"), "{on2}");
        assert!(on2.contains("target = { n = 129, ranks = 2 }"), "{on2}");
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let (ranks, target, rest) = rank_args(
            &args(&[
                "--ranks",
                "1,2,4,8",
                "--target-ranks",
                "16",
                "--repeats",
                "2",
            ]),
            16,
        )
        .unwrap();
        assert_eq!(
            (ranks, target, rest),
            (vec![1, 2, 4, 8], 16, args(&["--repeats", "2"]))
        );
        let e = rank_args(&args(&["--target-ranks", "4"]), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank count `4`: expected 1 to 2"), "{e}");
        assert_eq!(rank_args(&[], 2).unwrap().0, vec![2]);
    }
}
