from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0006_check_run_id"),
    ]

    operations = [
        migrations.AddField(
            model_name="skillversion",
            name="routing_vector_model",
            field=models.CharField(blank=True, editable=False, max_length=200),
        ),
    ]
