# One environment per framework (docs/environments.md). In mode venv each needed
# environment is a pip venv under environments.venv_dir, built from its spec in
# environments.spec_dir; its lock (pip freeze, Python, platform) goes to results/envs/.
# A failed build is not a failed job: the lock says why, and the framework's step
# writes unavailable rows with pip's error; the other frameworks go on.


localrules:
    build_env,
    envs,


rule envs:
    input:
        env_locks(),


rule build_env:
    input:
        unpack(env_spec_inputs),
    output:
        lock=f"{RESULTS}/envs/{{env}}/lock.txt",
        marker=f"{VENVS}/{{env}}/gpubench-env.json",
    log:
        f"{LOGS}/build_env/{{env}}.log",
    conda:
        driver_conda_env
    params:
        driver=DRIVER_PYTHON,
        script=SCRIPTS / "build_env.py",
        python=env_python,
        pip_args=env_pip_args,
        build=env_build,
        venv=lambda wildcards, output: str(Path(output.marker).parent),
    shell:
        "{params.driver} {params.script} --env {wildcards.env} --spec {input.spec:q}"
        " --venv {params.venv:q} --lock {output.lock:q} --marker {output.marker:q}"
        " --python {params.python:q} --build {params.build} --reuse {params.pip_args}"
        " > {log} 2>&1"
