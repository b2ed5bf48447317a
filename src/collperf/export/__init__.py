"""Writers (and one reader) for formats of the tools around collperf: NCCL's example tuner plugin
rules (nccl_tuner.py) and MSCCL algorithm XML (msccl.py, msccl_import.py)."""
