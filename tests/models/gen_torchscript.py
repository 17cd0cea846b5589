#!/usr/bin/python3
"""Writes the TorchScript test models (torch.jit.trace, then torch.jit.save) with Debian's
python3-torch, and for each a seeded input file and torch's own outputs on it (the oracle).

Usage: /usr/bin/python3 tests/models/gen_torchscript.py --out DIR [--seed 0]

Catalogue (float32, eval mode, seeded weights):
  ts_resnet       ResNet-style CNN: conv / batch_norm / relu stem, max_pool, two basic blocks
                  (the second strided, with a 1x1 projection), adaptive_avg_pool, flatten,
                  linear. `x` [1,3,32,32] -> [1,10]
  ts_mobilenet    MobileNetV2-style inverted residual blocks: 1x1 expand, depthwise 3x3,
                  hardswish / relu6 (hardtanh), 1x1 project, residual add; then SiLU, mean
                  over H and W, linear and log_softmax. `x` [1,8,16,16] -> [1,5]
  ts_transformer  a small transformer encoder (2 layers, d 32, 4 heads, FFN 64, GELU):
                  embedding of int64 tokens plus a learned position table, linear q/k/v,
                  view / transpose / matmul attention with softmax, layer_norm, residuals,
                  then a causal read-out through aten::_scaled_dot_product_attention;
                  returns a tuple (hidden states, the first token's pooled tanh).
                  `tokens` int64 [2,10] -> [2,10,32], [2,32]
  ts_lstm         a one-layer LSTM (batch first) over `seq` [2,7,6] with a linear head on
                  the last step, plus the final hidden and cell states. -> [2,4], [1,2,12] x2;
                  then a two-layer bidirectional LSTM (sequence first) over its output
                  -> [7,2,10], [4,2,5] x2
  ts_upsample     nearest (scale 2) and bilinear (size, align_corners False) upsampling,
                  cat, stack, slicing, select, adaptive_avg_pool2d to sizes that do and do
                  not divide the input, sum over two dims and over all, indexing with an
                  index tensor. `x` [1,4,5,6]
  ts_scripted     torch.jit.script (not traced): if on x.dim(), if on self.training, the
                  length check inside adaptive_avg_pool2d, a for loop over range(3) and a
                  while loop on the rank; conv, relu, linear. `x` [1,3,8,8]
  ts_bad_*        refusals: an op Lathe does not translate (cumsum), a loop on a tensor's
                  value (scripted), a truncated archive

Each model M gets M.pt, M_inputs.npz (arrays named after the forward's arguments) and
M_expected.npz (output0, output1, ... in the order Lathe names them).
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (x if self.proj is None else self.proj(x)))


class ResNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.block1 = BasicBlock(16, 16, 1)
        self.block2 = BasicBlock(16, 32, 2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        y = self.block2(self.block1(self.pool(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


class InvertedResidual(nn.Module):
    def __init__(self, c, expand, act):
        super().__init__()
        h = c * expand
        self.expand = nn.Sequential(nn.Conv2d(c, h, 1, bias=False), nn.BatchNorm2d(h), act())
        self.dw = nn.Sequential(nn.Conv2d(h, h, 3, 1, 1, groups=h, bias=False), nn.BatchNorm2d(h), act())
        self.project = nn.Sequential(nn.Conv2d(h, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.project(self.dw(self.expand(x)))


class MobileNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = InvertedResidual(8, 4, nn.ReLU6)
        self.b2 = InvertedResidual(8, 3, nn.Hardswish)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        y = F.silu(self.b2(self.b1(x)))
        return F.log_softmax(self.head(y.mean(dim=(2, 3))), dim=-1)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.f1, self.f2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def split(self, x):
        b, s, d = x.shape
        return x.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / (d // self.heads) ** 0.5, dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        x = self.n1(x + self.o(ctx))
        return self.n2(x + self.f2(F.gelu(self.f1(x))))


class Transformerish(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 32)
        self.pos = nn.Parameter(torch.randn(10, 32) * 0.1)
        self.layers = nn.ModuleList([EncoderLayer(32, 4, 64) for _ in range(2)])
        self.pool = nn.Linear(32, 32)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for layer in self.layers:
            x = layer(x)
        # A causal self-attention read-out through the fused attention op.
        b, s, d = x.shape
        heads = x.view(b, s, 4, d // 4).transpose(1, 2)
        fused, _ = torch.ops.aten._scaled_dot_product_attention(heads, heads, heads, None, 0.0, False, True)
        x = x + fused.transpose(1, 2).reshape(b, s, d)
        return x, torch.tanh(self.pool(x[:, 0]))


class LSTMish(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 12, batch_first=True)
        self.head = nn.Linear(12, 4)
        # Two layers, both directions, sequence first, on the first one's output.
        self.deep = nn.LSTM(12, 5, num_layers=2, bidirectional=True)

    def forward(self, seq):
        y, (h, c) = self.lstm(seq)
        y2, (h2, c2) = self.deep(y.transpose(0, 1))
        return self.head(y[:, -1]), h, c, y2, h2, c2


class Upsampleish(nn.Module):
    def forward(self, x):
        near = F.interpolate(x, scale_factor=2.0, mode="nearest")
        lin = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)
        both = torch.cat([near[:, :, 1:8, 2:11], lin], dim=1)
        picked = torch.stack([both.select(1, 0), both[:, 3]], dim=1)
        # Adaptive average pooling to sizes that do not divide the input (7x9 to 3x4: windows
        # of different sizes that overlap) and that do (10x12 to 5x4).
        uneven = F.adaptive_avg_pool2d(both, (3, 4))
        even = F.adaptive_avg_pool2d(near, (5, 4))
        # Sums over some dims (kept) and over all of them; advanced indexing with one index
        # tensor (negative entries count from the end).
        gathered = both[:, :, torch.tensor([[6, 0], [-1, 2]])]
        return (both, picked.permute(0, 2, 3, 1).contiguous(), uneven, even,
                both.sum(dim=[2, 3], keepdim=True), near.sum(), gathered)


class Scriptedish(nn.Module):
    """Scripted, not traced: branches on the rank, and the length check inside
    adaptive_avg_pool2d, decided at import from the input's shape."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        if x.dim() == 3:
            x = x.unsqueeze(0)
        y = F.relu(self.conv(x))
        if self.training:
            y = y * 2.0
        # A for loop over a range of known length, and a while loop whose condition depends
        # only on the rank: both unrolled at import.
        for i in range(3):
            y = torch.relu(y - 0.1 * i)
        k = 0
        while k < x.dim() - 2:
            y = y * 1.5
            k += 1
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


class DataDependentLoop(nn.Module):
    """Refused: the loop's trip count is a tensor's value."""

    def forward(self, x):
        for _ in range(int(x.sum())):
            x = x - 1.0
        return x


class Unsupportedish(nn.Module):
    def forward(self, x):
        return torch.cumsum(torch.relu(x), dim=1)


CATALOGUE = {
    "ts_resnet": (ResNetish, {"x": (np.float32, [1, 3, 32, 32])}),
    "ts_mobilenet": (MobileNetish, {"x": (np.float32, [1, 8, 16, 16])}),
    "ts_transformer": (Transformerish, {"tokens": (np.int64, [2, 10])}),
    "ts_lstm": (LSTMish, {"seq": (np.float32, [2, 7, 6])}),
    "ts_upsample": (Upsampleish, {"x": (np.float32, [1, 4, 5, 6])}),
    "ts_scripted": (Scriptedish, {"x": (np.float32, [1, 3, 8, 8])}),
    # Refused: cumsum is not translated; a loop on a tensor's value.
    "ts_bad_unsupported": (Unsupportedish, {"x": (np.float32, [2, 3])}),
    "ts_bad_loop": (DataDependentLoop, {"x": (np.float32, [2, 3])}),
}


def randomise_batchnorm(module, gen):
    """Eval-mode BatchNorm with non-trivial statistics, so folding them is tested."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.2)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)
    for name, (cls, inputs) in CATALOGUE.items():
        torch.manual_seed(a.seed)
        gen = torch.Generator().manual_seed(a.seed + 1)
        model = cls()
        with torch.no_grad():
            randomise_batchnorm(model, gen)
        model.eval()
        rng = np.random.RandomState(a.seed)
        feeds = {}
        for arg, (dtype, shape) in inputs.items():
            feeds[arg] = (rng.randint(0, 50, size=shape) if dtype == np.int64
                          else rng.uniform(-1, 1, size=shape)).astype(dtype)
        args = tuple(torch.from_numpy(feeds[k]) for k in inputs)
        with torch.no_grad():
            traced = (torch.jit.script(model) if name in ("ts_scripted", "ts_bad_loop")
                      else torch.jit.trace(model, args))
            expected = [t.numpy() for t in flatten(traced(*args))]
        path = os.path.join(a.out, name + ".pt")
        traced.save(path)
        np.savez(os.path.join(a.out, name + "_inputs.npz"), **feeds)
        np.savez(os.path.join(a.out, name + "_expected.npz"),
                 **{f"output{i}": e for i, e in enumerate(expected)})
        print("wrote", path, os.path.getsize(path), "bytes,", len(expected), "outputs")
    # A damaged archive: the first half of a valid one.
    good = open(os.path.join(a.out, "ts_resnet.pt"), "rb").read()
    with open(os.path.join(a.out, "ts_bad_truncated.pt"), "wb") as f:
        f.write(good[:len(good) // 2])


if __name__ == "__main__":
    main()
