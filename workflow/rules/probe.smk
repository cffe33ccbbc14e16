from gpubench.probe import config_transfer_sizes


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
        bench_slot=1,
    params:
        python=step_python,
        script=SCRIPTS / "probe.py",
        # the bus is probed at the sizes the transfer steps measure
        transfer_sizes=" ".join(str(n) for n in config_transfer_sizes(config)),
    shell:
        "{params.python} {params.script} --out {output}"
        " --transfer-sizes {params.transfer_sizes} > {log} 2>&1"
