from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0004_version_changelog"),
    ]

    operations = [
        migrations.AddField(
            model_name="skillversion",
            name="routing_vector",
            field=models.BinaryField(editable=False, null=True),
        ),
    ]
