rule collect:
    input:
        timings=raw_timings(),
        samples=raw_samples(),
        env=f"{RESULTS}/env/host.json",
    output:
        timings=f"{RESULTS}/timings.csv",
        samples=f"{RESULTS}/samples.csv",
    log:
        f"{LOGS}/collect.log",
    conda:
        driver_conda_env
    params:
        python=step_python,
        script=SCRIPTS / "collect.py",
    shell:
        "{params.python} {params.script} --timings {input.timings}"
        " --samples {input.samples} --out-timings {output.timings}"
        " --out-samples {output.samples} --env {input.env} > {log} 2>&1"
