"""Amazon SES through django-anymail, its boto3 client made on Vigil's shared botocore loader
(``apps/lib/aws.py``): production's ``EMAIL_BACKEND``."""

from __future__ import annotations

from anymail.backends import amazon_ses

from apps.lib import aws


class EmailBackend(amazon_ses.EmailBackend):
    """anymail's SES v2 backend, the same settings (``ANYMAIL["AMAZON_SES_..."]``) and
    payloads; only ``open()`` differs, reading botocore's bundled models once a process instead
    of once a connection."""

    def open(self) -> bool:
        if self.client:
            return False  # already open
        try:
            session = aws.boto3_session(**self.session_params)
            self.client = session.client("sesv2", **self.client_params)
        except Exception:
            if not self.fail_silently:
                raise
            return False
        return True
