# disttorch in a container: the image each node of docker-compose.yml runs.
#   docker build -t disttorch .
#   docker run --rm disttorch disttorch-launch --nproc 2 examples/train_digits.py
FROM python:3.11-slim
WORKDIR /disttorch
# setup.py installs the alias's .pth, which DISTTORCH_AS_TORCH=1 needs
COPY pyproject.toml setup.py README.md ./
COPY disttorch ./disttorch
COPY launcher ./launcher
COPY examples ./examples
RUN pip install --no-cache-dir '.[fast]'  # numba: the compiled LSTM step and dropout masks
# The agents' store (on node 0) listens on 29500; ranks pick their own free ports.
EXPOSE 29500
CMD ["disttorch-launch", "--nproc", "2", "examples/train_digits.py"]
