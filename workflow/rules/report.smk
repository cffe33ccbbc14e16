rule report:
    input:
        timings=f"{RESULTS}/timings.csv",
        samples=f"{RESULTS}/samples.csv",
        env=f"{RESULTS}/env/host.json",
    output:
        html=f"{RESULTS}/report/index.html",
        md=f"{RESULTS}/report/summary.md",
    log:
        f"{LOGS}/report.log",
    conda:
        "../envs/driver.yaml"
    params:
        python=step_python,
        script=SCRIPTS / "report.py",
    shell:
        "{params.python} {params.script} --timings {input.timings}"
        " --samples {input.samples} --env {input.env}"
        " --html {output.html} --md {output.md} > {log} 2>&1"
