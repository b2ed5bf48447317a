"""Real processes on torch.distributed. torch is imported only below this package."""
