#!/usr/bin/env bash
# make demo: migrate, start a real Celery worker (and beat for the stale-job sweep) and
# the demo model, seed and verify demo runs and judged points, then serve the site at
# http://127.0.0.1:8000 the production way: DEBUG off, gunicorn, static files collected and served by WhiteNoise (compressed,
# hashed names, long max-age). Plain HTTP on loopback, so cookies are not HTTPS-only.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
mkdir -p var
[ -s var/demo-secret-key ] || $BIN/python -c 'import secrets; print(secrets.token_urlsafe(50))' > var/demo-secret-key
export DJANGO_DEBUG=false
export DJANGO_SECRET_KEY="$(cat var/demo-secret-key)"
export DJANGO_SECURE_SSL_REDIRECT=false DJANGO_SECURE_COOKIES=false DJANGO_HSTS_SECONDS=0
# password-reset mails are printed here, not sent
export DJANGO_EMAIL_BACKEND=django.core.mail.backends.console.EmailBackend
$BIN/python manage.py migrate --noinput
$BIN/python manage.py collectstatic --noinput >/dev/null
$BIN/celery -A pitweb worker --pool=solo --loglevel=WARNING -n demo@%h &
WORKER=$!
$BIN/celery -A pitweb beat --loglevel=WARNING --schedule var/celerybeat-schedule &
BEAT=$!
# the demo model for the judged points: a demo judge and two demo readers, none a model
rm -f var/demo-model.url
$BIN/pit-harness points demo-model --points examples/finance-points --url-file var/demo-model.url >var/demo-model.log &
DEMO_MODEL=$!
trap 'kill $WORKER $BEAT $DEMO_MODEL 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s var/demo-model.url ] && break; kill -0 $DEMO_MODEL || exit 1; sleep 0.1; done
$BIN/python manage.py demo_seed --demo-model "$(cat var/demo-model.url)"
# the forward track: two agents committed, executed on the days appended after them
$BIN/python manage.py demo_forward --staff staff --submitter demo
# formal cohorts: a live-shadow cohort resolved, a sealed cohort answered before its reveal
$BIN/python manage.py demo_cohorts --demo-model "$(cat var/demo-model.url)" --staff staff --submitter demo
echo "sign in at http://127.0.0.1:8000/accounts/login/ as demo, password $(cat var/demo-submitter-password) (staff: staff / staff-demo-password)"
echo "serving http://127.0.0.1:8000 (Ctrl-C stops the site and the worker)"
$BIN/gunicorn pitweb.wsgi --bind 127.0.0.1:8000 --workers 2 --access-logfile -
