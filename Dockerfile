# The agentrt image: runs the worker (`agentrt-worker`) by default and carries the `agentrt`
# CLI. Built by docker-compose.yml; settings come from AGENTRT_* in the environment.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# The package's own files only: no virtualenv, caches or local data from the checkout.
# pyproject.toml maps each root folder to agentrt.<folder>; setup.py lists their packages.
COPY pyproject.toml setup.py ./
COPY agentrt/ agentrt/
COPY contracts/ contracts/
COPY core/ core/
COPY store/ store/
COPY activities/ activities/
COPY workflows/ workflows/
COPY workers/ workers/
COPY starter/ starter/
COPY api/ api/
# Compiled bytecode in the image: PYTHONDONTWRITEBYTECODE stops Python writing .pyc at run
# time (the image is read-only to the worker's user anyway), so without this every process
# would compile the package from source, and the workflow sandbox would on each run.
# `--compile` asks pip for it; compileall makes sure of it whatever pip decides.
RUN pip install --compile . \
    && python -c "import compileall, pathlib, sys, agentrt; \
sys.exit(not compileall.compile_dir(pathlib.Path(agentrt.__file__).parent, quiet=1))" \
    && rm -rf /src

# Not root. /data holds the generated seal key when AGENTRT_SEAL_KEYS is unset; a named
# volume mounted there takes this ownership.
RUN useradd --create-home --uid 10001 agentrt && mkdir /data && chown agentrt /data
USER agentrt
WORKDIR /home/agentrt
ENV AGENTRT_DATA_DIR=/data

STOPSIGNAL SIGTERM
CMD ["agentrt-worker"]
