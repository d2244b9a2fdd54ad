"""The one place that builds boto3 clients.

Every AWS call in Vigil gets its client here, so region, credentials, retries, timeouts and the
endpoint override are decided once: the default credential chain or a role to assume on top of
it (refreshed before it expires; demo accounts use fixed keys against the stand-in); STS's
regional endpoint always (opt-in regions such as ap-east-1 reject the global one's tokens);
botocore's adaptive retries with connect and read timeouts; epoch timestamps parsed straight to
UTC (dateutil's local time zone was the largest single cost of an EFS cycle); and
``AWS_ENDPOINT_URL``, one endpoint for every service (moto in tests and demo mode). Amazon SES's
client, which anymail's backend makes, takes its session here (``boto3_session``) and its
region, retries and timeouts from ``ANYMAIL`` in the settings.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from django.conf import settings

if TYPE_CHECKING:  # boto3 and botocore's sessions load on the first client, not at start
    import boto3
    import botocore.loaders
    import botocore.session
    from botocore.client import BaseClient
    from botocore.config import Config

DEMO_ACCESS_KEY = "demo"  # the embedded stand-in accepts any key; this one says what it is
OPT_IN_HINT = (
    "This looks like an opt-in region rejecting a token from the global STS endpoint: make sure "
    "the region is enabled for the account, and that AWS_STS_REGIONAL_ENDPOINTS is not 'legacy' "
    "(Vigil itself always uses regional STS endpoints)."
)
OPT_IN_ERROR_CODES = {"InvalidToken", "IllegalLocationConstraintException"}


@dataclass(frozen=True)
class AccountAccess:
    """How to reach one AWS account: the default chain, or a role to assume on top of it."""

    role_arn: str = ""
    external_id: str = ""
    demo: bool = False


def _config(region: str, validate: bool = True) -> Config:
    from botocore.config import Config

    return Config(
        region_name=region,
        parameter_validation=validate,
        retries={"mode": "adaptive", "total_max_attempts": settings.AWS_MAX_ATTEMPTS},
        connect_timeout=settings.AWS_CONNECT_TIMEOUT,
        read_timeout=settings.AWS_READ_TIMEOUT,
        user_agent_appid="vigil",
    )


def _base_session(access: AccountAccess) -> botocore.session.Session:
    session = _new_botocore_session()
    if access.demo:
        session.set_credentials(DEMO_ACCESS_KEY, DEMO_ACCESS_KEY)
    return session


def utc_timestamp(value: object) -> datetime:
    """botocore's timestamp parser without its cost: an epoch number becomes a UTC datetime
    directly (botocore's default converts each through dateutil's local time zone), the same
    object for the same number (a GetMetricData answer repeats a few hundred timestamps over
    every query); anything else goes to botocore's own parser."""
    if isinstance(value, int | float):
        return _epoch(value)
    from botocore.utils import parse_timestamp

    return parse_timestamp(value)


@lru_cache(maxsize=4096)
def _epoch(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


@lru_cache(maxsize=4)
def _data_loader(data_path: str | None) -> botocore.loaders.Loader:
    """One reader of botocore's bundled JSON (service models, endpoints, rule sets) for every
    session: a session's own would parse them again, EC2's model alone tens of milliseconds,
    for the first client of every region and account."""
    from botocore.loaders import create_loader

    return create_loader(data_path)


def _new_botocore_session() -> botocore.session.Session:
    import botocore.session

    session = botocore.session.get_session()
    session.register_component(
        "data_loader", _data_loader(session.get_config_variable("data_path"))
    )
    session.set_config_variable("sts_regional_endpoints", "regional")
    parsers = session.get_component("response_parser_factory")
    parsers.set_parser_defaults(timestamp_parser=utc_timestamp)
    return session


def boto3_session(**params: Any) -> boto3.Session:
    """A boto3 session on the shared botocore loader, for a client made outside ``client()``
    (anymail's SES backend opens one for every connection: with a loader of its own, each read
    SES's model and the endpoint rules again, about 100 ms of CPU)."""
    import boto3

    return boto3.Session(botocore_session=_new_botocore_session(), **params)


_lock = threading.Lock()


@lru_cache(maxsize=256)
def _session(access: AccountAccess, region: str, endpoint_url: str | None) -> boto3.Session:
    import boto3
    from botocore.credentials import AssumeRoleCredentialFetcher, DeferredRefreshableCredentials

    base = _base_session(access)
    if not access.role_arn:
        return boto3.Session(botocore_session=base, region_name=region)

    def sts_client(service: str, **kwargs: Any) -> BaseClient:
        kwargs.setdefault("endpoint_url", endpoint_url)
        kwargs["config"] = _config(region)
        return base.create_client(service, **kwargs)

    source = base.get_credentials()
    if source is None:
        raise NoCredentialsError()
    extra: dict[str, str] = {"RoleSessionName": "vigil"}
    if access.external_id:
        extra["ExternalId"] = access.external_id
    fetcher = AssumeRoleCredentialFetcher(
        client_creator=sts_client,
        source_credentials=source,
        role_arn=access.role_arn,
        extra_args=extra,
    )
    assumed = _new_botocore_session()
    # botocore has no public setter for refreshable credentials; this is how its own
    # assume-role provider hands them to a session.
    assumed._credentials = DeferredRefreshableCredentials(
        method="assume-role", refresh_using=fetcher.fetch_credentials
    )
    return boto3.Session(botocore_session=assumed, region_name=region)


def client(
    service: str, region: str, access: AccountAccess = AccountAccess(), *, validate: bool = True
) -> BaseClient:
    """A boto3 client for ``service`` in ``region`` for the account reached through ``access``.
    ``validate=False`` skips botocore's check of every request against the service model,
    for requests a test already holds to it (GetMetricData's 500 queries: 5 ms a call)."""
    endpoint_url = settings.AWS_ENDPOINT_URL
    with _lock:  # boto3 sessions are not thread-safe while creating clients
        session = _session(access, region, endpoint_url)
        config = _config(region, validate)
        return session.client(service, endpoint_url=endpoint_url, config=config)


def clear_cache() -> None:
    """Forget cached sessions (after credentials or the endpoint changed; used by tests)."""
    _session.cache_clear()


def describe_error(exc: BaseException) -> str:
    """One line for a person: the AWS error code and message, with a hint where one helps."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "Error")
        message = error.get("Message") or str(exc)
        if message.lstrip().startswith("<"):  # an HTML error page, not an AWS error
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
            code, message = "HTTPError", f"the endpoint answered HTTP {status} with a web page"
        text = f"{code}: {message}"
        if code in OPT_IN_ERROR_CODES:
            text = f"{text}. {OPT_IN_HINT}"
        return text
    if isinstance(exc, NoCredentialsError):
        return (
            "No AWS credentials found: configure the default credential chain "
            "(environment, ~/.aws, instance role) or a role for this account."
        )
    if isinstance(exc, BotoCoreError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
