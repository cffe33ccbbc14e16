localrules:
    suite,


# The run's suite and what the full suite would add (the report's header says both).
rule suite:
    output:
        suite_file(),
    log:
        f"{LOGS}/suite.log",
    conda:
        driver_conda_env
    params:
        info=suite_info,
    shell:
        "printf '%s\\n' {params.info:q} > {output} 2> {log}"


rule report:
    input:
        unpack(report_mpi_inputs),
        timings=f"{RESULTS}/timings.csv",
        samples=f"{RESULTS}/samples.csv",
        env=f"{RESULTS}/env/host.json",
        locks=step_locks(),
        suite=suite_file(),
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
        # written by the report beside the page (its detail view links it): every row
        rows=f"{RESULTS}/report/index-rows.csv",
    # The figures' PNGs go to report/summary_figures/, not an output: Snakemake deletes
    # an output folder with everything in it before the job. The report replaces only
    # the PNGs it wrote (listed in summary_figures/.gpubench-figures), linked from
    # summary.md.
    log:
        f"{LOGS}/report.log",
    conda:
        driver_conda_env
    threads: 4
    params:
        python=step_python,
        script=SCRIPTS / "report.py",
        mpi=report_mpi_args,
        figures=f"{RESULTS}/report/summary_figures",
    shell:
        "{params.python} {params.script} --timings {input.timings}"
        " --samples {input.samples} --env {input.env} --locks {input.locks}"
        " --suite {input.suite}"
        " {params.mpi} --jobs {threads}"
        " --html {output.html} --md {output.md} --figures {params.figures:q}"
        " > {log} 2>&1"
