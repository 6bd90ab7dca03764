from django.urls import path

from apps.learn.api import views

app_name = "learn-api"
urlpatterns = [
    path("retrieve", views.RetrieveView.as_view(), name="retrieve"),
]
