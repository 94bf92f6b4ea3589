FROM python:3.11-slim
WORKDIR /app
# bubblewrap: the agent's sandbox (pit-harness runs agents in their own namespaces)
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# the harness and the site; no development tools
COPY requirements/site.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir --require-hashes -r site.lock
COPY . .
RUN pip install --no-cache-dir --no-deps -e . \
    && DJANGO_DEBUG=false DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "pitweb.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
