rule report:
    input:
        timings=f"{RESULTS}/timings.csv",
        samples=f"{RESULTS}/samples.csv",
        env=f"{RESULTS}/env/host.json",
        locks=step_locks(),
        mpi=mpi_csv(),
    output:
        html=f"{RESULTS}/report/index.html",
        md=f"{RESULTS}/report/summary.md",
    log:
        f"{LOGS}/report.log",
    conda:
        driver_conda_env
    params:
        python=step_python,
        script=SCRIPTS / "report.py",
        mpi_arg=lambda wildcards, input: f"--mpi {input.mpi}" if input.mpi else "",
    shell:
        "{params.python} {params.script} --timings {input.timings}"
        " --samples {input.samples} --env {input.env} --locks {input.locks}"
        " --html {output.html} --md {output.md} {params.mpi_arg} > {log} 2>&1"
