#!/usr/bin/env python3
"""PyTorch on envdist's policy network and PPO update: the anchor `xtask bench-train` is read against.

After ../shared/anchors/bench_torch_policy.py (same first argument, the device, and the same
"preset NAME: ... learning N samples/s ..." line), with the network and the loss brought to what
envdist's trainer runs (crates/trainer/src/model.rs, trainer.rs):

- image: `patch-mlp`, 8x8 patches -> a shared 64-wide embedding (ReLU) -> one dense layer over all
  patch positions (ReLU);
- text: five channels, each a bag of hashed tokens summed through one embedding table and scaled
  by the channel's weight (EmbeddingBag with per-token weights), plus a learned presence vector,
  times the channel's presence; 40 tokens a channel, as the shared anchor;
- fusion: concat -> dense (ReLU) -> 22 masked logits and a value;
- update: clipped PPO surrogate, value_coef * MSE / 2, entropy bonus, global-norm clipping at 0.5,
  Adam; the cpu preset's minibatch (256) and learning rate.

Run it with the integration-tier venv (torch), alone on the machine, interleaved with
`cargo xtask bench-train --preset cpu --updates 6 --json`:

    python scripts/bench_torch_policy.py cpu --preset cpu [--threads 2]
"""

import argparse
import time

import torch
import torch.nn as nn

PRESETS = {
    "cpu": dict(img=32, patch=8, pd=64, idim=256, vocab=1024, td=32, hid=256, envs=32, mb=256, lr=5e-4),
    "gpu": dict(img=64, patch=8, pd=128, idim=512, vocab=4096, td=64, hid=512, envs=256, mb=1024, lr=3e-4),
}
CH, NA, TOKENS = 5, 22, 40
CLIP, VALUE_COEF, ENTROPY_COEF, MAX_GRAD_NORM = 0.2, 0.5, 0.01, 0.5


class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        num_patches = (c["img"] // c["patch"]) ** 2
        patch_values = c["patch"] ** 2 * 3
        self.patch = nn.Linear(patch_values, c["pd"])
        self.image = nn.Linear(num_patches * c["pd"], c["idim"])
        self.text = nn.EmbeddingBag(c["vocab"], c["td"], mode="sum")
        self.presence = nn.Parameter(torch.randn(CH, c["td"]) * 0.1)
        self.fuse = nn.Linear(c["idim"] + CH * c["td"], c["hid"])
        self.pi = nn.Linear(c["hid"], NA)
        self.v = nn.Linear(c["hid"], 1)

    def forward(self, patches, tok, off, tok_w, present, mask):
        n = patches.shape[0]
        p = torch.relu(self.patch(patches)).reshape(n, -1)
        img = torch.relu(self.image(p))
        t = self.text(tok, off, per_sample_weights=tok_w).reshape(n, CH, -1)
        t = ((t + self.presence) * present).reshape(n, -1)
        h = torch.relu(self.fuse(torch.cat([img, t], 1)))
        return self.pi(h) + mask, self.v(h).squeeze(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("device", nargs="?", default="cuda", help="torch device (cpu, cuda); default cuda, as the shared anchor")
    ap.add_argument("--preset", default="cpu,gpu", help="comma-separated presets (cpu, gpu); default both")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads; 0 keeps torch's default (one per core)")
    ap.add_argument("--updates", type=int, default=50, help="timed minibatch updates (after 5 untimed)")
    args = ap.parse_args()
    names = [p for p in args.preset.split(",") if p]
    for p in names:
        if p not in PRESETS:
            ap.error(f"--preset: unknown preset {p!r}, expected one of {', '.join(PRESETS)}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    dev = args.device
    for name in names:
        c = PRESETS[name]
        torch.manual_seed(0)
        net = Net(c).to(dev)
        opt = torch.optim.Adam(net.parameters(), c["lr"])
        num_patches = (c["img"] // c["patch"]) ** 2
        patch_values = c["patch"] ** 2 * 3
        params = sum(p.numel() for p in net.parameters())

        def batch(n, on):
            patches = torch.randint(0, 255, (n, num_patches, patch_values), dtype=torch.uint8, device=on)
            tok = torch.randint(0, c["vocab"], (n * CH * TOKENS,), device=on)
            off = torch.arange(0, n * CH * TOKENS, TOKENS, device=on)
            tok_w = torch.full((n * CH * TOKENS,), TOKENS ** -0.5, device=on)
            present = torch.ones(n, CH, 1, device=on)
            mask = torch.zeros(n, NA, device=on)
            return patches, tok, off, tok_w, present, mask

        def update(x, act, old_logp, adv, ret):
            patches, tok, off, tok_w, present, mask = x
            logits, v = net(patches.float() / 255, tok, off, tok_w, present, mask)
            logp_all = torch.log_softmax(logits, 1)
            logp = logp_all.gather(1, act[:, None]).squeeze(1)
            ratio = (logp - old_logp).exp()
            pg = -torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv).mean()
            v_loss = (0.5 * (v - ret) ** 2).mean()
            entropy = -(logp_all.exp() * logp_all).sum(1).mean()
            loss = pg + VALUE_COEF * v_loss - ENTROPY_COEF * entropy
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), MAX_GRAD_NORM)
            opt.step()

        mb = c["mb"]
        x = batch(mb, dev)
        act = torch.randint(0, NA, (mb,), device=dev)
        z = torch.randn(mb, device=dev)
        old_logp = torch.full((mb,), -3.0, device=dev)
        for _ in range(5):
            update(x, act, old_logp, z, z)
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(args.updates):
            update(x, act, old_logp, z, z)
        if dev == "cuda":
            torch.cuda.synchronize()
        learn = args.updates * mb / (time.perf_counter() - t)
        # Inference: one env step's observations built on the host, copied, forward, actions back.
        xh = batch(c["envs"], "cpu")
        k = 200
        with torch.no_grad():
            def infer():
                patches, tok, off, tok_w, present, mask = (a.to(dev) for a in xh)
                return net(patches.float() / 255, tok, off, tok_w, present, mask)[0].argmax(1).cpu()

            for _ in range(5):
                infer()
            t = time.perf_counter()
            for _ in range(k):
                infer()
            inference = k * c["envs"] / (time.perf_counter() - t)
        print(
            f"torch {torch.__version__} {dev} ({torch.get_num_threads()} threads) preset {name}: {params} params; "
            f"learning {learn:,.0f} samples/s (minibatch {mb}); "
            f"inference {inference:,.0f} samples/s (batch {c['envs']}, host->device each step)",
            flush=True,
        )


if __name__ == "__main__":
    main()
