"""Dynamic quantization of an LSTM word language model, in the style of PyTorch's tutorial
"Dynamic Quantization on an LSTM Word Language Model" (no download: a random corpus).

Runs as is under PyTorch, and under disttorch with ``python -m disttorch.as_torch``.
"""

import io
import time

import torch
import torch.nn as nn


class LSTMModel(nn.Module):
    """Encoder (embedding), a recurrent module, and a decoder (linear) to the vocabulary."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (
            weight.new_zeros(self.nlayers, bsz, self.nhid),
            weight.new_zeros(self.nlayers, bsz, self.nhid),
        )


def print_size_of_model(model):
    """The size of the model's state_dict as torch.save writes it (the tutorial's measure)."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    print("Size (MB):", len(buf.getvalue()) / 1e6)


def evaluate(model, data, bptt=25):
    model.eval()
    total, hidden = 0.0, model.init_hidden(data.size(1))
    criterion = nn.CrossEntropyLoss()
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            seq_len = min(bptt, data.size(0) - 1 - i)
            inputs, targets = data[i : i + seq_len], data[i + 1 : i + 1 + seq_len].reshape(-1)
            output, hidden = model(inputs, hidden)
            total += seq_len * criterion(output.view(-1, output.size(-1)), targets).item()
    return total / (data.size(0) - 1)


def main():
    torch.manual_seed(0)
    ntokens = 1000
    model = LSTMModel(ntoken=ntokens, ninp=256, nhid=256, nlayers=2)
    model.eval()
    corpus = torch.randint(0, ntokens, (101, 4))
    quantized_model = torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    print(quantized_model)
    print_size_of_model(model)
    print_size_of_model(quantized_model)
    for name, m in (("float", model), ("quantized", quantized_model)):
        start = time.time()
        loss = evaluate(m, corpus)
        print(f"{name}: loss {loss:.6f} elapsed {time.time() - start:.2f} s")


if __name__ == "__main__":
    main()
