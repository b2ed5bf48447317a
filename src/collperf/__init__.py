"""collperf: the performance of collective communication.

    import collperf
    net = collperf.network(ranks=16, latency="10us", bandwidth="100GB/s")
    for prediction in collperf.predict("allreduce", "1M,1G", net):
        print(prediction.best, prediction.lower_bound_s)
"""

from collperf.api import algorithms, crossover, network, predict
from collperf.errors import UsageError
from collperf.model.costs import Cost, cost
from collperf.model.network import Cluster, Link
from collperf.model.predict import Network, Prediction
from collperf.model.presets import PRESETS, get_preset

__version__ = "0.1.0"
__all__ = ["algorithms", "crossover", "network", "predict", "cost", "Cost", "Cluster", "Link", "Network",
           "Prediction", "PRESETS", "get_preset", "UsageError"]
