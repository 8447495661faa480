pragma circom 2.0.0;

// c = a * b, with a and b private: the smallest circuit with one real constraint.
template Multiplier() {
    signal input a;
    signal input b;
    signal output c;
    c <== a * b;
}

component main = Multiplier();
