rule probe:
    output:
        f"{RESULTS}/env/host.json",
    log:
        f"{LOGS}/probe.log",
    threads: step_threads
    resources:
        gpu=probe_gpus,
    conda:
        "../envs/driver.yaml"
    params:
        python=step_python,
        script=SCRIPTS / "probe.py",
    shell:
        "{params.python} {params.script} --out {output} > {log} 2>&1"
