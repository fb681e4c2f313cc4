# Attention Lab in one container, serving on port 8501.
#   docker build -t attention-lab . && docker run --rm -p 8501:8501 attention-lab
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1
WORKDIR /app

# The CPU-only torch wheel first (about 200 MB instead of several GB of CUDA libraries);
# requirements.txt then finds torch==2.13.0 already satisfied.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY .streamlit .streamlit
COPY streamlit_app.py .
COPY attention_core attention_core
COPY ui ui
COPY app_pages app_pages

RUN useradd --create-home lab
USER lab
EXPOSE 8501
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health')"
CMD ["streamlit", "run", "streamlit_app.py", "--server.port=8501", "--server.address=0.0.0.0", "--server.headless=true"]
