from django.urls import path

from apps.accounts.views import notices

urlpatterns = [
    path("notices/unsubscribe/<str:token>", notices.unsubscribe, name="notice-unsubscribe"),
]
