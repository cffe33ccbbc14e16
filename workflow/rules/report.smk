rule report:
    input:
        unpack(report_mpi_inputs),
        timings=f"{RESULTS}/timings.csv",
        samples=f"{RESULTS}/samples.csv",
        env=f"{RESULTS}/env/host.json",
        locks=step_locks(),
    output:
        html=report(
            f"{RESULTS}/report/index.html",
            caption="../report/index.rst",
            category="gpubench report",
            labels={"file": "index.html", "what": "comparison report"},
        ),
        md=report(
            f"{RESULTS}/report/summary.md",
            caption="../report/summary.rst",
            category="gpubench report",
            labels={"file": "summary.md", "what": "summary"},
        ),
        # The list of PNGs the report wrote (not the folder: Snakemake deletes an output
        # folder with everything in it before the job; the report replaces its own).
        figures=f"{RESULTS}/report/summary_figures/.gpubench-figures",
    log:
        f"{LOGS}/report.log",
    conda:
        driver_conda_env
    threads: 4
    params:
        python=step_python,
        script=SCRIPTS / "report.py",
        mpi=report_mpi_args,
        figures=lambda wildcards, output: str(Path(output.figures).parent),
    shell:
        "{params.python} {params.script} --timings {input.timings}"
        " --samples {input.samples} --env {input.env} --locks {input.locks}"
        " {params.mpi} --jobs {threads}"
        " --html {output.html} --md {output.md} --figures {params.figures:q}"
        " > {log} 2>&1"
