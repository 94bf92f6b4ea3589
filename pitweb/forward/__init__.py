"""The forward track on the site: the commitment log, commitments, and the forward and
backtest runs the workers execute for them as a release grows."""
