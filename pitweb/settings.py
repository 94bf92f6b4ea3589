"""One settings module, driven by environment variables (see .env.example).

Defaults let a newcomer run everything with no server: SQLite and a filesystem
Celery broker with a real worker process. Production sets DATABASE_URL (Postgres)
and REDIS_URL, and differs only by environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu.entity import Queue

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("PITWEB_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: use true or false")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: an integer is required") from None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Off unless asked for: a deployment that forgets a variable fails closed. `make demo` and
# `make test` turn it on for a developer's machine.
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is required when DJANGO_DEBUG is false "
            "(set DJANGO_DEBUG=true on a developer's machine)"
        )
    SECRET_KEY = "dev-only-not-secret"
# who is mailed every server error ("Name <address>, ..."); nobody when empty
ADMINS = [
    (entry.split("<")[0].strip() or entry, entry.split("<")[-1].rstrip(">").strip())
    for entry in env_list("DJANGO_ADMINS", "")
]
SERVER_EMAIL = os.environ.get("DJANGO_SERVER_EMAIL", "pitweb@localhost")
EMAIL_HOST = os.environ.get("DJANGO_EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("DJANGO_EMAIL_PORT", 25)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "pitweb.core",
    "pitweb.jobs",
    "pitweb.accounts",
    "pitweb.releases",
    "pitweb.runs",
    "pitweb.board",
    "pitweb.pricing",
    "pitweb.points",
    "pitweb.execution",
    "pitweb.forward",
    "pitweb.certificates",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "pitweb.middleware.RefuseUnreadableInput",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

# -- Content-Security-Policy: our own scripts only, no inline script anywhere (the API
# docs load their set-up from a URL, too); inline styles only because Plotly writes them
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE  # noqa: E402

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

ROOT_URLCONF = "pitweb.urls"
WSGI_APPLICATION = "pitweb.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "pitweb.core.context.site",
            ]
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'pitweb.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # a file, not memory, so that a real worker process can share the test database
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-pitweb.sqlite3")}
    # the demo's site, worker and seeding write one file at once: a writer takes the lock
    # when its transaction begins (never by upgrading a read, which fails at once), readers
    # are not blocked by it (WAL), and a writer waits up to 30 s for another
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The site's Ed25519 signing key (PEM, PKCS#8, unencrypted): it signs run certificates,
# board snapshots, the commitment log's head and the revocation list. Unset: a key made on
# first use and kept in the database (with the time it was made as its start), the same on
# every machine, fine for a trial; production keeps its key outside the var folder, backed up, and says from
# when it signs (ISO 8601). Earlier keys stay published (a key set JSON file) so what they
# signed still verifies.
PITWEB_SIGNING_KEY_FILE = os.environ.get("PITWEB_SIGNING_KEY_FILE", "")
PITWEB_SIGNING_KEY_VALID_FROM = os.environ.get("PITWEB_SIGNING_KEY_VALID_FROM", "")
PITWEB_SIGNING_KEY_VALID_UNTIL = os.environ.get("PITWEB_SIGNING_KEY_VALID_UNTIL", "")
PITWEB_RETIRED_SIGNING_KEYS = os.environ.get("PITWEB_RETIRED_SIGNING_KEYS", "")
if PITWEB_SIGNING_KEY_FILE and not PITWEB_SIGNING_KEY_VALID_FROM:
    raise ImproperlyConfigured(
        "PITWEB_SIGNING_KEY_FILE needs PITWEB_SIGNING_KEY_VALID_FROM: the time (ISO 8601) "
        "from which the key signs, published beside it"
    )
# who the published key set says signs (the site's public address, say)
PITWEB_SIGNING_ISSUER = os.environ.get("PITWEB_SIGNING_ISSUER", "pitweb")

# the footer's link to the site's source code (empty: no link)
PITWEB_SOURCE_URL = os.environ.get("PITWEB_SOURCE_URL", "")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("PITWEB_STATIC_ROOT", VAR_DIR / "static"))
STATICFILES_DIRS: list[Path | tuple[str, str]] = [BASE_DIR / "static"]
# Artifacts (releases, receipts, trajectories, prices) go through the storage API: a local
# folder by default, an S3-compatible object store when PITWEB_S3_BUCKET is set.
PITWEB_S3_BUCKET = os.environ.get("PITWEB_S3_BUCKET", "")
_ARTIFACTS: dict[str, Any] = (
    {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": PITWEB_S3_BUCKET,
            "endpoint_url": os.environ.get("PITWEB_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("PITWEB_S3_REGION") or None,
            "access_key": os.environ.get("PITWEB_S3_ACCESS_KEY_ID") or None,
            "secret_key": os.environ.get("PITWEB_S3_SECRET_ACCESS_KEY") or None,
            "file_overwrite": False,
            "default_acl": None,
            "querystring_auth": True,
        },
    }
    if PITWEB_S3_BUCKET
    else {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": str(Path(os.environ.get("PITWEB_ARTIFACT_DIR", VAR_DIR / "artifacts")))
        },
    }
)
STORAGES = {
    "default": _ARTIFACTS,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}
    if not DEBUG
    else {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# -- accounts: the site's own sign-in (never the admin's) ------------------------
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "account"
LOGOUT_REDIRECT_URL = "leaderboard"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]
# anyone may create an account at /accounts/signup/; off: by a staff invitation only
PITWEB_OPEN_SIGNUP = env_bool("PITWEB_OPEN_SIGNUP", False)
# how long a staff invitation link stays usable (it is used once)
PITWEB_INVITATION_DAYS = env_int("PITWEB_INVITATION_DAYS", 7)
# failed sign-ins allowed per account and per client address within the window; then
# that account (or address) is refused until the window ends
PITWEB_SIGNIN_ACCOUNT_LIMIT = env_int("PITWEB_SIGNIN_ACCOUNT_LIMIT", 5)
PITWEB_SIGNIN_ADDRESS_LIMIT = env_int("PITWEB_SIGNIN_ADDRESS_LIMIT", 20)
PITWEB_SIGNIN_WINDOW_SECONDS = env_int("PITWEB_SIGNIN_WINDOW_SECONDS", 15 * 60)
# the proxies in front of the site that append the client's address to X-Forwarded-For
# (a client's own X-Forwarded-For entries are never trusted); 0: the connection's address
PITWEB_PROXY_HOPS = env_int("PITWEB_PROXY_HOPS", 0)
# password-reset links and sign-up mails: the console on a developer's machine and in the
# demo (the mail is printed), SMTP (DJANGO_EMAIL_HOST) otherwise
EMAIL_BACKEND = os.environ.get("DJANGO_EMAIL_BACKEND") or (
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend"
)
DEFAULT_FROM_EMAIL = os.environ.get("DJANGO_DEFAULT_FROM_EMAIL", SERVER_EMAIL)

# -- uploads -----------------------------------------------------------------
# The trading cost every run's platform figures are also computed at: a fee in basis points
# of the notional on each side (harness.market.frictions); the board shows returns after it
# beside the gross ones.
PITWEB_COST_BPS = float(os.environ.get("PITWEB_COST_BPS", "10"))
PITWEB_MAX_RECEIPT_BYTES = env_int("PITWEB_MAX_RECEIPT_BYTES", 8 * 1024 * 1024)
PITWEB_MAX_TRAJECTORY_BYTES = env_int("PITWEB_MAX_TRAJECTORY_BYTES", 256 * 1024 * 1024)
PITWEB_MAX_CONFIG_BYTES = env_int("PITWEB_MAX_CONFIG_BYTES", 1024 * 1024)
PITWEB_MAX_JSON_DEPTH = env_int("PITWEB_MAX_JSON_DEPTH", 32)
# a point set's archive (staff upload): its size, members and bytes once unpacked
PITWEB_MAX_POINTSET_BYTES = env_int("PITWEB_MAX_POINTSET_BYTES", 32 * 1024 * 1024)
PITWEB_MAX_POINTSET_MEMBERS = env_int("PITWEB_MAX_POINTSET_MEMBERS", 5000)
PITWEB_MAX_POINTSET_UNPACKED = env_int("PITWEB_MAX_POINTSET_UNPACKED", 64 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = PITWEB_MAX_RECEIPT_BYTES
# every file streams to a temporary file and stops at its field's limit (413)
FILE_UPLOAD_HANDLERS = ["pitweb.runs.uploads.LimitedUploadHandler"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "pitweb.accounts.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "pitweb.core.errors.exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "uploads": os.environ.get("PITWEB_UPLOAD_RATE", "60/hour"),
        "staff_actions": os.environ.get("PITWEB_STAFF_RATE", "120/hour"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "pitweb API",
    # Swagger UI shows this above the operations: the way back to the site
    "DESCRIPTION": "Submit pit-harness runs, follow their verification, read the leaderboard. "
    "[Back to the site](/) · [methodology](/methodology/)",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # the docs page loads Swagger UI from our own static files, not a CDN
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # every closed set the API returns is a named enum, each value with the pages' words
    "ENUM_NAME_OVERRIDES": {
        "VerificationLevelEnum": "pitweb.runs.enums.VERIFICATION_LEVEL",
        "VerificationStateEnum": "pitweb.runs.enums.RUN_STATE",
        "VerificationJobKindEnum": "pitweb.runs.enums.JOB_KIND",
        "VisibilityEnum": "pitweb.runs.enums.VISIBILITY",
        "MaskVerdictEnum": "pitweb.runs.enums.MASK_VERDICT",
        "MemoryVerdictEnum": "pitweb.runs.enums.MEMORY_VERDICT",
        "CutoffRelationEnum": "pitweb.runs.enums.CUTOFF_RELATION",
        "ExecutionStateEnum": "pitweb.execution.enums.EXECUTION_STATE",
        "ExecutionKindEnum": "pitweb.execution.enums.EXECUTION_KIND",
        "ExecutionCellStateEnum": "pitweb.execution.enums.CELL_STATE",
        "CellStatusEnum": "pitweb.execution.enums.CELL_STATUS",
        "JudgedClassEnum": "pitweb.points.enums.JUDGED_CLASS",
        "VerdictOutcomeEnum": "pitweb.points.enums.OUTCOME",
        "JudgeReliabilityEnum": "pitweb.points.enums.RELIABILITY",
        "PointSetStateEnum": "pitweb.points.enums.POINT_SET_STATE",
        "JudgedSetOriginEnum": "pitweb.points.enums.JUDGED_ORIGIN",
        "AnswerSetOriginEnum": "pitweb.points.enums.ANSWER_ORIGIN",
        "AnswerSetTimingEnum": "pitweb.points.enums.ANSWER_TIMING",
        "PointSetKindEnum": "pitweb.points.enums.POINT_SET_KIND",
        "LogEntryKindEnum": "pitweb.forward.enums.ENTRY_KIND",
        "CommitmentStateEnum": "pitweb.forward.enums.COMMITMENT_STATE",
        "ForwardRunKindEnum": "pitweb.forward.enums.RUN_KIND",
        "ForwardRunStatusEnum": "pitweb.forward.enums.RUN_STATUS",
    },
}

# -- cache: shared by every process (throttles, cached boards) -------------------
REDIS_URL = os.environ.get("REDIS_URL", "")


def _cache_url(broker: str) -> str:
    """The cache's own Redis database: the broker's index plus one, so clearing the
    cache never touches queued jobs (or PITWEB_CACHE_URL: in production a Redis of its
    own, with a memory limit and an eviction policy the broker's must never have)."""
    given = os.environ.get("PITWEB_CACHE_URL", "")
    if given:
        return given
    head, _, index = broker.rstrip("/").rpartition("/")
    if head.startswith("redis") and index.isdigit() and head.count("/") >= 2:
        return f"{head}/{(int(index) + 1) % 16}"
    return broker.rstrip("/") + "/1"


CACHES = {
    "default": {
        # for speed only: an unreachable Redis means each process caches on its own
        "BACKEND": "pitweb.cache.ForgivingRedisCache",
        "LOCATION": _cache_url(REDIS_URL),
        "KEY_PREFIX": "pitweb",
        # a cache that does not answer at once is treated as down, not waited for
        "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.5},
    }
    if REDIS_URL
    else {
        # no Redis: the database is the one store every process shares
        "BACKEND": "pitweb.cache.SharedDatabaseCache",
        "LOCATION": "pitweb_cache",
    }
}

# -- logging: every server error with its traceback to stderr (and mail to ADMINS) ---
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "plain"},
        "mail_admins": {
            "class": "django.utils.log.AdminEmailHandler",
            "level": "ERROR",
            "filters": ["require_debug_false"],
        },
    },
    "filters": {"require_debug_false": {"()": "django.utils.log.RequireDebugFalse"}},
    "loggers": {
        "django.request": {
            "handlers": ["stderr", "mail_admins"],
            "level": "ERROR",
            "propagate": False,
        },
        "pitweb": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
}

# -- Celery ------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = REDIS_URL or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"visibility_timeout": 3600}
    if REDIS_URL
    else {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("PITWEB_JOB_SOFT_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = env_int("PITWEB_JOB_HARD_LIMIT", 660)
CELERY_TASK_IGNORE_RESULT = True
# The stored boards are computed on a queue of their own, so a computation never waits
# behind verifications and scorings (minutes each): a worker with no -Q takes both, and
# docker-compose runs one more worker for the boards alone.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery"), Queue("board"))  # type: ignore[no-untyped-call]
CELERY_TASK_ROUTES = {"pitweb.board.tasks.refresh_boards_task": {"queue": "board"}}
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "sweep-stale-jobs": {"task": "pitweb.jobs.tasks.sweep_stale_jobs", "schedule": 30.0},
    # the forward track: each line's newest version scheduled, each ended execution settled
    # (what a lost signal left undone; idempotent)
    "forward-sweep": {"task": "pitweb.forward.tasks.forward_sweep", "schedule": 60.0},
}
# a snapshot of the whole public board every week (Monday 00:00 UTC), unless turned off
PITWEB_WEEKLY_SNAPSHOT = env_bool("PITWEB_WEEKLY_SNAPSHOT", True)
if PITWEB_WEEKLY_SNAPSHOT:
    CELERY_BEAT_SCHEDULE["weekly-board-snapshot"] = {
        "task": "pitweb.board.tasks.publish_weekly_snapshot",
        "schedule": crontab(minute=0, hour=0, day_of_week="mon"),
    }
PITWEB_HEARTBEAT_SECONDS = env_int("PITWEB_HEARTBEAT_SECONDS", 5)
PITWEB_STALE_AFTER_SECONDS = env_int("PITWEB_STALE_AFTER_SECONDS", 60)
# a run is ranked only with at least this many priced trades in its ranked cell (shifted/pit)
PITWEB_MIN_RANKED_TRADES = env_int("PITWEB_MIN_RANKED_TRADES", 30)
# a stored board older than the board is served while a worker computes it again; after
# this many seconds with no worker done, the next visitor computes it (one at a time)
PITWEB_BOARD_STALE_SECONDS = env_int("PITWEB_BOARD_STALE_SECONDS", 5)
# a board query is rendered at most once per this many milliseconds; meanwhile its last
# render is served (never one from before a run left public view)
PITWEB_BOARD_RENDER_MS = env_int("PITWEB_BOARD_RENDER_MS", 1000)
# how long a server process goes on with the board's stamp it read (a change made in
# another process, a hide included, reaches its pages within this; 0: read every request)
PITWEB_BOARD_STAMP_MS = env_int("PITWEB_BOARD_STAMP_MS", 50)
# where a worker keeps its local copies of releases (checked against their digests)
PITWEB_RELEASE_CACHE = Path(os.environ.get("PITWEB_RELEASE_CACHE") or VAR_DIR / "release-cache")
# the folder of release folders staff may register from the site (a new version, say)
PITWEB_RELEASE_INBOX = Path(os.environ.get("PITWEB_RELEASE_INBOX") or VAR_DIR / "release-inbox")
# Growing a release from EDGAR (off unless PITWEB_EDGAR_BASE_URL is set, e.g.
# https://www.sec.gov): each business day's daily index and the headers of the forms
# named are fetched into the inbox (at most PITWEB_EDGAR_RATE requests a second, the SEC's
# ceiling being 10), and the next version of the release line PITWEB_EDGAR_RELEASE is
# built with its row-key secret and registered. The SEC requires a User-Agent naming you.
PITWEB_EDGAR_BASE_URL = os.environ.get("PITWEB_EDGAR_BASE_URL", "").rstrip("/")
PITWEB_EDGAR_USER_AGENT = os.environ.get("PITWEB_EDGAR_USER_AGENT", "").strip()
PITWEB_EDGAR_INBOX = Path(os.environ.get("PITWEB_EDGAR_INBOX") or VAR_DIR / "edgar-inbox")
PITWEB_EDGAR_RELEASE = os.environ.get("PITWEB_EDGAR_RELEASE", "")
PITWEB_EDGAR_SECRET_FILE = os.environ.get("PITWEB_EDGAR_SECRET_FILE", "")
PITWEB_EDGAR_FORMS = env_list("PITWEB_EDGAR_FORMS", "8-K")
PITWEB_EDGAR_RATE = env_int("PITWEB_EDGAR_RATE", 10)
if PITWEB_EDGAR_BASE_URL:
    for _name, _value in (
        ("PITWEB_EDGAR_USER_AGENT", PITWEB_EDGAR_USER_AGENT),
        ("PITWEB_EDGAR_RELEASE", PITWEB_EDGAR_RELEASE),
        ("PITWEB_EDGAR_SECRET_FILE", PITWEB_EDGAR_SECRET_FILE),
    ):
        if not _value:
            raise ImproperlyConfigured(
                f"{_name} is required when PITWEB_EDGAR_BASE_URL is set (the SEC asks every "
                "client to name itself; the fetcher grows one release line with its secret)"
            )
    if not 1 <= PITWEB_EDGAR_RATE <= 10:
        raise ImproperlyConfigured("PITWEB_EDGAR_RATE: 1 to 10 requests a second (the SEC's limit)")
    # well after EDGAR rebuilds its nightly indexes (from about 22:00 New York time): a
    # day asked for before its index is out would be recorded as a day without one
    CELERY_BEAT_SCHEDULE["edgar-fetch-next-day"] = {
        "task": "pitweb.releases.tasks.fetch_next_day",
        "schedule": crontab(minute=0, hour=10),
    }
# the registered model (by name) that judges every uploaded answer set; none: staff judge them
PITWEB_POINTS_JUDGE = os.environ.get("PITWEB_POINTS_JUDGE", "")
PITWEB_POINTS_JOB_SOFT_LIMIT = env_int("PITWEB_POINTS_JOB_SOFT_LIMIT", 6 * 3600)
PITWEB_POINTS_JOB_HARD_LIMIT = env_int("PITWEB_POINTS_JOB_HARD_LIMIT", 6 * 3600 + 60)


def _agent_packages() -> dict[str, dict[str, object]]:
    """The stdio agents installed on the workers that staff may register (never a command
    a submitter wrote): by name, the argv (``{examples}`` is this checkout's examples/
    folder), the dialect and the agent folders. A JSON file of the same shape replaces
    them (PITWEB_AGENT_PACKAGES_FILE)."""
    given = os.environ.get("PITWEB_AGENT_PACKAGES_FILE", "")
    if given:
        loaded: dict[str, dict[str, object]] = json.loads(Path(given).read_text())
        return loaded
    return {
        "pit-stdio-python": {
            "argv": ["python3", "{examples}/agents/pit_stdio.py"],
            "dialect": "pit",
            "about": "the reference agent in our dialect (examples/agents/pit_stdio.py)",
        },
        "sharpebench-stdio-python": {
            "argv": ["python3", "{examples}/agents/sharpebench_stdio.py"],
            "dialect": "sharpebench",
            "about": "the reference agent in sharpebench's dialect",
        },
        # the demo's forward track: its memory (written by demo_forward) covers only the
        # sessions before its commitment, so its edge ends where the forward runs begin
        "memory-cheat-demo": {
            "argv": [
                "python3",
                "{harness}/agents/memory_cheat.py",
                "{var}/demo/forward/memory-CHEAT.json",
            ],
            "dialect": "pit",
            "about": "DELIBERATE CHEAT for the demo: a memory of answers, not a forecast",
        },
    }


PITWEB_AGENT_PACKAGES = _agent_packages()
PITWEB_EXAMPLES_DIR = BASE_DIR / "examples"
# hosts an HTTP agent may be registered at (exact names); private, loopback and link-local
# addresses are refused after DNS and again on every connect unless allowed here
PITWEB_AGENT_HOSTS = env_list("PITWEB_AGENT_HOSTS", "")
PITWEB_AGENT_PRIVATE_ADDRESSES = env_bool("PITWEB_AGENT_PRIVATE_ADDRESSES", False)
PITWEB_EXECUTION_CELL_SOFT_LIMIT = env_int("PITWEB_EXECUTION_CELL_SOFT_LIMIT", 3600)
PITWEB_EXECUTION_CELL_HARD_LIMIT = env_int("PITWEB_EXECUTION_CELL_HARD_LIMIT", 3660)

for folder in (
    VAR_DIR,
    STATIC_ROOT,
    BROKER_DIR / "queue",
    BROKER_DIR / "processed",
    BROKER_DIR / "control",
):
    folder.mkdir(parents=True, exist_ok=True)

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # cookies only over HTTPS, unless a site is deliberately served on plain HTTP (the
    # demo on loopback; a deployment whose TLS edge is elsewhere keeps the default)
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# plotly.min.js is served from the installed plotly package, never from a CDN.
import plotly as _plotly  # noqa: E402

STATICFILES_DIRS.append(("plotly", str(Path(_plotly.__file__).parent / "package_data")))
