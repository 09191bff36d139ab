"""What the SNIA PTS tests share (issue 26): the steady-state rule (`steady`), the client and
enterprise variants and the rounds loop on a simulated drive (`rounds`), and the common charts
(`charts`). Each test is a scenario module in `ssdlab.scenarios` (``pts_iops``, ...); docs/pts.md
describes them step by step with their sources.
"""
