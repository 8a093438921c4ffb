import torch


class ThrustPolicy(torch.nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(4, hidden),
            torch.nn.Tanh(),
            torch.nn.Linear(hidden, 2),
        )

    def forward(self, features):
        return 2.0 * torch.tanh(self.net(features))
