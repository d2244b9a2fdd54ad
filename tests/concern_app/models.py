from __future__ import annotations

from django.db import models
from django.urls import reverse

from apps.regions.models import Subject


class Gadget(Subject):
    concern = "gadgets"
    name = models.CharField(max_length=50)

    def __str__(self) -> str:
        return f"gadget {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("gadgets:gadget_detail", args=[self.pk])
