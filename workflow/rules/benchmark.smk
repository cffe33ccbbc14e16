rule run_backend:
    input:
        unpack(step_env_inputs),
    output:
        timings=f"{RESULTS}/raw/{{backend}}.csv",
        samples=f"{RESULTS}/raw/{{backend}}.samples.csv",
        lock=f"{RESULTS}/raw/{{backend}}.lock.txt",
    log:
        f"{LOGS}/run_backend/{{backend}}.log",
    group:
        step_group
    conda:
        step_conda_env
    threads: step_threads
    # bench_slot: one per benchmark step, MPI job and probe; the local profile has one,
    # so no two measure at once whatever step_threads asks (docs/running.md)
    resources:
        gpu=step_gpus,
        bench_slot=1,
        attempt=lambda wildcards, attempt: attempt,
    params:
        python=step_python,
        script=SCRIPTS / "run.py",
        step_config=step_config,
        env_args=step_env_args,
        guard=step_guard_args,
        compile_cache=step_compile_cache_args,
    shell:
        "{params.python} {params.script} --backend {wildcards.backend}"
        " --threads {threads} --config-json {params.step_config:q}"
        " --csv {output.timings} --samples {output.samples}"
        " {params.env_args} {params.compile_cache} --lock-out {output.lock}"
        " {params.guard} > {log} 2>&1"
