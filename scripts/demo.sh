#!/usr/bin/env bash
# make demo: migrate, start a real Celery worker (and beat for the stale-job sweep),
# seed and verify demo runs, then serve the site at http://127.0.0.1:8000.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export DJANGO_DEBUG="${DJANGO_DEBUG:-true}"  # a developer's machine (production sets a key)
$BIN/python manage.py migrate --noinput
$BIN/celery -A pitweb worker --pool=solo --loglevel=WARNING -n demo@%h &
WORKER=$!
$BIN/celery -A pitweb beat --loglevel=WARNING --schedule var/celerybeat-schedule &
BEAT=$!
trap 'kill $WORKER $BEAT 2>/dev/null || true' EXIT
$BIN/python manage.py demo_seed
echo "serving http://127.0.0.1:8000 (Ctrl-C stops the site and the worker)"
$BIN/python manage.py runserver 127.0.0.1:8000 --noreload
