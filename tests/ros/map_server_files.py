"""map_server's map files read independently of the node, without ROS: the YAML and its binary
PGM image (used by the tests' helpers and by the benchmark scripts)."""

import pathlib

import yaml


def read_map_server(path):
    """The YAML's fields and its image as `(meta, width, height, maxval, pixels)`: `pixels` the
    image's bytes row by row from its top row (comments in the header skipped)."""
    path = pathlib.Path(path)
    meta = yaml.safe_load(path.read_text())
    raw = (path.parent / meta["image"]).read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:  # P5, width, height, maxval; comments start with '#'
        while raw[pos:pos + 1].isspace():
            pos += 1
        if raw[pos:pos + 1] == b"#":
            pos = raw.index(b"\n", pos) + 1
            continue
        end = pos
        while not raw[end:end + 1].isspace():
            end += 1
        fields.append(raw[pos:end])
        pos = end
    assert fields[0] == b"P5", f"{meta['image']}: not a binary PGM"
    width, height, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    return meta, width, height, maxval, raw[pos + 1:pos + 1 + width * height]
