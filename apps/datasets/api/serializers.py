from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from apps.datasets.models import Release, ReleaseFile


def file_url(release: Release, item: ReleaseFile) -> str:
    return f"{settings.SITE_URL}/releases/{release.version}/files/{item.path}"


class ReleaseFileOutputSerializer(serializers.Serializer):
    path = serializers.CharField()
    config = serializers.CharField(help_text="Empty for README.md and manifest.json.")
    size = serializers.IntegerField()
    sha256 = serializers.CharField()
    num_rows = serializers.IntegerField()
    url = serializers.SerializerMethodField(
        help_text="Download link (a signed, time-limited URL once followed, on S3)."
    )

    def get_url(self, item: ReleaseFile) -> str | None:
        release = self.context["release"]
        return None if release.files_deleted else file_url(release, item)


class ReleaseOutputSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    name = serializers.CharField()
    url = serializers.SerializerMethodField()
    published_at = serializers.DateTimeField()
    num_rows = serializers.IntegerField()
    download_size = serializers.IntegerField()
    num_added = serializers.SerializerMethodField()
    num_removed = serializers.SerializerMethodField()
    previous = serializers.SerializerMethodField()
    superseded = serializers.SerializerMethodField(
        help_text="True from the moment a trajectory in it is deleted, made private or taken out."
    )
    superseded_at = serializers.DateTimeField(allow_null=True)
    superseded_by = serializers.SerializerMethodField(
        help_text="The newest release, when this one holds trajectories removed since and a "
        "later one without them is published (null until then: one is being built)."
    )
    removal_only = serializers.BooleanField(
        help_text="Built only to leave out what was removed since the previous release."
    )
    announced_as = serializers.IntegerField(
        allow_null=True,
        help_text="The version this release was announced as, when a removal-only release "
        "published during its opt-out window took that number (null otherwise).",
    )
    files_deleted = serializers.BooleanField()

    def get_url(self, release: Release) -> str:
        return f"{settings.SITE_URL}/api/v1/releases/{release.version}"

    def get_num_added(self, release: Release) -> int:
        return len(release.added_ids)

    def get_num_removed(self, release: Release) -> int:
        return len(release.removed_ids)

    def get_previous(self, release: Release) -> int | None:
        return release.previous.version if release.previous_id and release.previous else None

    def get_superseded(self, release: Release) -> bool:
        return release.is_superseded

    def get_superseded_by(self, release: Release) -> int | None:
        newest = self.context.get("newest")
        if not release.is_superseded or newest is None or newest.version <= release.version:
            return None
        return newest.version


class ReleaseDetailOutputSerializer(ReleaseOutputSerializer):
    scanner_version = serializers.CharField()
    excluded = serializers.DictField(child=serializers.IntegerField())
    added_ids = serializers.ListField(child=serializers.CharField())
    removed_ids = serializers.ListField(child=serializers.CharField())
    card = serializers.CharField(help_text="README.md (Markdown with YAML front matter).")
    files = serializers.SerializerMethodField()

    def get_files(self, release: Release) -> list[dict]:
        from apps.datasets.selectors import release_files

        return ReleaseFileOutputSerializer(
            release_files(release), many=True, context={"release": release}
        ).data
