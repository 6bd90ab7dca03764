"""What every template may name: the site's name and address and the data licence (settings only)."""

from django.conf import settings


def site(request):
    return {
        "SITE_NAME": settings.SITE_NAME,
        "SITE_URL": settings.SITE_URL,
        "DATA_LICENSE": settings.TRAJHUB_LICENSE,
    }
