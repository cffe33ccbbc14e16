rule probe:
    output:
        f"{RESULTS}/env/host.json",
    log:
        f"{LOGS}/probe.log",
    group:
        probe_group
    conda:
        driver_conda_env
    threads: step_threads
    resources:
        gpu=probe_gpus,
    params:
        python=step_python,
        script=SCRIPTS / "probe.py",
    shell:
        "{params.python} {params.script} --out {output} > {log} 2>&1"
