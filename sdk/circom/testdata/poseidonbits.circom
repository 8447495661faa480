pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";

// Poseidon of two private inputs, one of them split into bits, and a public input that scales the
// digest: a few hundred constraints with long linear combinations and large coefficients, and
// every kind of wire (public output, public input, private input, internal).
template PoseidonBits() {
    signal input x;
    signal input y;
    signal input scale;
    signal output digest;
    signal output scaled;
    signal output bitsum;

    component hash = Poseidon(2);
    hash.inputs[0] <== x;
    hash.inputs[1] <== y;
    digest <== hash.out;
    scaled <== digest * scale;

    component bits = Num2Bits(64);
    bits.in <== x;
    var sum = 0;
    for (var i = 0; i < 64; i++) {
        sum += bits.out[i];
    }
    bitsum <== sum;
}

component main {public [scale]} = PoseidonBits();
