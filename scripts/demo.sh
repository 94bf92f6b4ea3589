#!/usr/bin/env bash
# make demo: migrate, start a real Celery worker (and beat for the stale-job sweep),
# seed and verify demo runs, then serve the site at http://127.0.0.1:8000 the production
# way: DEBUG off, gunicorn, static files collected and served by WhiteNoise (compressed,
# hashed names, long max-age). Plain HTTP on loopback, so cookies are not HTTPS-only.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
mkdir -p var
[ -s var/demo-secret-key ] || $BIN/python -c 'import secrets; print(secrets.token_urlsafe(50))' > var/demo-secret-key
export DJANGO_DEBUG=false
export DJANGO_SECRET_KEY="$(cat var/demo-secret-key)"
export DJANGO_SECURE_SSL_REDIRECT=false DJANGO_SECURE_COOKIES=false DJANGO_HSTS_SECONDS=0
$BIN/python manage.py migrate --noinput
$BIN/python manage.py collectstatic --noinput >/dev/null
$BIN/celery -A pitweb worker --pool=solo --loglevel=WARNING -n demo@%h &
WORKER=$!
$BIN/celery -A pitweb beat --loglevel=WARNING --schedule var/celerybeat-schedule &
BEAT=$!
trap 'kill $WORKER $BEAT 2>/dev/null || true' EXIT
$BIN/python manage.py demo_seed
echo "serving http://127.0.0.1:8000 (Ctrl-C stops the site and the worker)"
$BIN/gunicorn pitweb.wsgi --bind 127.0.0.1:8000 --workers 2 --access-logfile -
