# MPI + GPU jobs (docs/mpi.md): one step per (job, backend, ranks). A step never
# fails the workflow for the job's sake: missing MPI, too few GPUs, a dead rank or the
# time limit become rows with the reason (mpi.enabled: true makes a missing MPI fatal).
# The launcher itself is wrapped in the step's time limit; `timeout` here is the
# backstop for the step as a whole.


rule mpi_job:
    input:
        unpack(step_env_inputs),
    output:
        rows=f"{RESULTS}/mpi/raw/{{job}}.{{backend}}.n{{ranks}}.csv",
        samples=f"{RESULTS}/mpi/raw/{{job}}.{{backend}}.n{{ranks}}.samples.csv",
    log:
        f"{LOGS}/mpi_job/{{job}}.{{backend}}.n{{ranks}}.log",
    conda:
        step_conda_env
    # one core per rank (locally capped at --cores; under SLURM the ranks are tasks)
    threads: lambda wildcards: int(wildcards.ranks)
    resources:
        tasks=lambda wildcards: int(wildcards.ranks),
        mpi=mpi_launcher_kind,
        gpu=step_gpus,
        gpus_per_task=step_gpus,
        runtime=mpi_runtime_min,
        bench_slot=1,
    params:
        python=step_python,
        ranks_python=mpi_ranks_python,
        script=SCRIPTS / "mpi_job.py",
        step_config=mpi_step_config,
        backstop=mpi_backstop_s,
    shell:
        "timeout -k 30 {params.backstop} {params.python} {params.script}"
        " --job {wildcards.job} --backend {wildcards.backend} --ranks {wildcards.ranks}"
        " --config-json {params.step_config:q} --python {params.ranks_python:q}"
        " --time-limit-min {resources.runtime}"
        " --csv {output.rows} --samples {output.samples} > {log} 2>&1"


rule collect_mpi:
    input:
        rows=mpi_rows(),
        samples=mpi_samples(),
    output:
        rows=f"{RESULTS}/mpi.csv",
        samples=f"{RESULTS}/mpi_samples.csv",
    log:
        f"{LOGS}/collect_mpi.log",
    conda:
        driver_conda_env
    params:
        python=step_python,
        script=SCRIPTS / "collect_mpi.py",
    shell:
        "{params.python} {params.script} --inputs {input.rows} --samples {input.samples}"
        " --out {output.rows} --out-samples {output.samples} > {log} 2>&1"
