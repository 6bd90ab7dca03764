from django.urls import path, re_path

from apps.datasets import views

urlpatterns = [
    path("releases/", views.release_list, name="releases"),
    path("releases/<int:version>/", views.release_detail, name="release"),
    re_path(
        r"^releases/(?P<version>[0-9]{1,9})/files/(?P<path>[a-z_]+/train-[0-9]{5}-of-[0-9]{5}\.parquet|README\.md|manifest\.json|dataset_info\.json)$",
        views.release_file,
        name="release-file",
    ),
    path("releases/optout/<str:token>", views.release_optout, name="release-optout"),
    path("me/releases/", views.next_release, name="release-next"),
]
