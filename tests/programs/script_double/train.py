import numpy as np
import warp as wp


@wp.kernel
def cubic(c: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, c[i] * c[i] * c[i])


class Model:
    def __init__(self):
        self.c = wp.array(np.array([1.0, 2.0, -1.0], dtype=np.float32), requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.tape = None

    def evaluate(self):
        self.loss.zero_()
        self.tape = wp.Tape()
        with self.tape:
            wp.launch(cubic, dim=3, inputs=[self.c, self.loss])
        self.tape.backward(self.loss)
        return float(self.loss.numpy()[0])


def main():
    model = Model()
    for it in range(3):
        value = model.evaluate()
        model.tape.backward(model.loss)
        g = model.c.grad.numpy().copy()
        model.tape.zero()
        model.c.assign(model.c.numpy() - 0.01 * g)
        print("loss", value)


if __name__ == "__main__":
    main()
