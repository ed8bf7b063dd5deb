"""Print one line per column: name, non-empty count, distinct values, min and max."""

import csv
import sys

with open(sys.argv[1], newline="") as handle:
    rows = list(csv.DictReader(handle))
for column in rows[0].keys() if rows else []:
    values = [r[column] for r in rows if r[column]]
    print(f"{column}\t{len(values)}\t{len(set(values))}\t{min(values, default='')}\t{max(values, default='')}")
