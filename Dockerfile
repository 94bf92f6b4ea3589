FROM python:3.11-slim
WORKDIR /app
# bubblewrap: the agent's sandbox (pit-harness runs agents in their own namespaces)
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /srv/pitweb --create-home pitweb
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PITWEB_VAR_DIR=/srv/pitweb/var PITWEB_STATIC_ROOT=/srv/pitweb/static
# the runtime only: the harness and the site (requirements/site.lock), no development tools
COPY requirements/site.lock ./
RUN pip install --no-cache-dir --require-hashes -r site.lock
COPY . .
RUN pip install --no-cache-dir --no-deps -e . \
    && mkdir -p /srv/pitweb/var /srv/pitweb/static /srv/pitweb/artifacts \
    && DJANGO_DEBUG=false DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput \
    && chown -R pitweb:pitweb /srv/pitweb
USER pitweb
EXPOSE 8000
CMD ["gunicorn", "pitweb.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
