from __future__ import annotations

import contextlib

import pytest
from botocore.exceptions import ClientError

from apps.lib import aws as factory


def test_it_points_every_client_at_the_endpoint_override(aws):
    client = factory.client("s3", "eu-west-1")
    assert client.meta.endpoint_url == aws
    assert client.meta.region_name == "eu-west-1"


def test_it_retries_in_adaptive_mode_with_timeouts(settings):
    settings.AWS_ENDPOINT_URL = None
    factory.clear_cache()
    config = factory.client("cloudwatch", "eu-west-1").meta.config
    assert config.retries["mode"] == "adaptive"
    assert config.retries["total_max_attempts"] == settings.AWS_MAX_ATTEMPTS
    assert config.connect_timeout == settings.AWS_CONNECT_TIMEOUT
    assert config.read_timeout == settings.AWS_READ_TIMEOUT


def test_it_checks_requests_against_the_model_unless_told_not_to(aws):
    from datetime import UTC, datetime

    from botocore.exceptions import ParamValidationError

    incomplete = {"StartTime": datetime(2026, 1, 1, tzinfo=UTC), "EndTime": datetime.now(UTC)}
    with pytest.raises(ParamValidationError):  # no MetricDataQueries: refused before sending
        factory.client("cloudwatch", "eu-west-1").get_metric_data(**incomplete)
    unchecked = factory.client("cloudwatch", "eu-west-1", validate=False)
    with contextlib.suppress(ClientError):
        unchecked.get_metric_data(**incomplete)  # sent: the endpoint judges it


@pytest.mark.parametrize("region", ["ap-east-1", "me-south-1", "eu-west-1", "us-east-1"])
def test_it_uses_the_regional_sts_endpoint_even_in_opt_in_regions(settings, region):
    settings.AWS_ENDPOINT_URL = None
    factory.clear_cache()
    endpoint = factory.client("sts", region).meta.endpoint_url
    assert endpoint == f"https://sts.{region}.amazonaws.com"


def test_it_assumes_a_role_through_sts(aws):
    access = factory.AccountAccess(
        role_arn="arn:aws:iam::210987654321:role/vigil-readonly", external_id="ext-42"
    )
    identity = factory.client("sts", "ap-east-1", access).get_caller_identity()
    assert identity["Account"] == "210987654321"
    assert ":assumed-role/vigil-readonly/vigil" in identity["Arn"]


def test_it_uses_fixed_keys_for_the_demo_account(aws):
    client = factory.client("ec2", "eu-west-1", factory.AccountAccess(demo=True))
    assert client._request_signer._credentials.access_key == factory.DEMO_ACCESS_KEY
    assert client.describe_regions()["Regions"]


def test_every_session_reads_botocores_models_once(settings):
    """One data loader for every region and account, kept when the sessions are forgotten: a
    session's own would parse EC2's model and the endpoint rules again (about 65 ms of CPU per
    client, 12 ms with the shared one)."""
    settings.AWS_ENDPOINT_URL = None
    factory.clear_cache()
    first = factory.client("ec2", "eu-west-1")
    factory.clear_cache()
    again = factory.client("ec2", "ap-east-1", factory.AccountAccess(demo=True))
    assert again.meta.region_name == "ap-east-1"
    assert again.meta.service_model is not first.meta.service_model
    # the model's JSON, as botocore read it, is the one object both clients were built from
    assert again.meta.service_model._service_description is (
        first.meta.service_model._service_description
    )


def _client_error(code: str, message: str = "refused") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "DescribeRegions")


@pytest.mark.parametrize("code", ["InvalidToken", "IllegalLocationConstraintException"])
def test_it_explains_opt_in_region_token_errors(code):
    text = factory.describe_error(_client_error(code, "The security token included is invalid"))
    assert text.startswith(f"{code}: The security token included is invalid")
    assert "opt-in region" in text and "regional STS" in text


def test_it_keeps_other_errors_short():
    text = factory.describe_error(_client_error("AccessDenied", "not authorized"))
    assert text == "AccessDenied: not authorized"


def test_it_reads_epoch_timestamps_as_utc_without_the_local_time_zone():
    from datetime import UTC, datetime

    assert factory.utc_timestamp(1_700_000_000) == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert factory.utc_timestamp(1_700_000_000.5).tzinfo is UTC
    parsed = factory.utc_timestamp("2023-11-14T22:13:20Z")  # other forms: botocore's parser
    assert parsed == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
