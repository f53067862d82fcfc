"""What running the fleet reads and keeps: the metrics' gauges (`gauges`), the retention
pass (`retention`) and the profiles the workers registered (`registry`)."""
