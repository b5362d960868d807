"""tf.signal: DFTs on complex tensors, framing, STFT and its inverse, windows, the mel matrix,
DCTs and MFCCs, with gradients."""
import numpy as np
import pytest

import minitf as tf


# Expected values computed with TensorFlow 2.21 on the inputs below (float64 / complex128;
# windows and the mel matrix in their default float32): (real parts, imaginary parts) for
# complex results.
X = np.array([0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.05, -0.9, 1.6, 0.2])
M = X[:8].reshape(2, 4)
Z = (X[:6] + 1j * X[4:]).reshape(2, 3)
XR = X.reshape(2, 5)
ZV = np.array([[0.3 - 0.4j, -1.2 + 1.1j, 2.0 + 0.05j], [0.7 - 0.9j, -0.4 + 1.6j, 1.1 + 0.2j]])
W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])

STFT = ([[1.875, -0.6015611, -1.8, 1.2015611, 0.525], [0.5, 0.2860913, -1.5, 1.0639087, -0.2]],
        [[0.0, -1.5883883, 0.725, 1.4116117, 0.0], [0.0, -0.5068019, -0.25, 1.1431981, 0.0]])
ISTFT = [0.0, -0.12, 1.8, 0.7, -0.4, 1.1, 0.05, -0.81, 0.16]
HANN5 = [0.0, 0.5, 1.0, 0.5, 0.0]
HANN6 = [0.0, 0.25, 0.75, 1.0, 0.75, 0.24999980628490448]
HANN6S = [0.0, 0.345491498708725, 0.9045084714889526, 0.9045084714889526, 0.3454914093017578, 0.0]
HAMMING6 = [0.07999999821186066, 0.3100000023841858, 0.7699999809265137, 1.0, 0.7699999809265137,
            0.3099997937679291]
HAMMING6S = [0.07999999821186066, 0.39785221219062805, 0.9121478796005249, 0.9121478199958801,
             0.3978520929813385, 0.07999999821186066]
KAISER = [0.08848050236701965, 0.5085160136222839, 0.9327116012573242, 0.9327116012573242,
          0.5085160136222839, 0.08848050236701965]
KAISER5 = [5.279999822960235e-05, 0.2156725972890854, 1.0, 0.2156725972890854,
           5.279999822960235e-05]
KBD = [0.22047880291938782, 0.7071068286895752, 0.975391685962677, 0.975391685962677,
       0.7071068286895752, 0.22047880291938782]
VORBIS = [0.149435892701149, 0.8563191294670105, 1.0, 0.8563191294670105, 0.14943569898605347]
MEL = [[0.0, 0.0, 0.0, 0.0], [0.6762279868125916, 0.32377201318740845, 0.0, 0.0],
       [0.0, 0.5390681028366089, 0.46093180775642395, 0.0],
       [0.0, 0.0, 0.6973018050193787, 0.30269819498062134],
       [0.0, 0.0, 0.02868410013616085, 0.9713159203529358], [0.0, 0.0, 0.0, 0.47399410605430603],
       [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
DCT1 = [[2.6, -3.6, 0.2, 6.0], [1.0, 1.55, -2.45, -1.6]]
DCT2 = [[3.6, -3.1882776, 0.2828427, 5.6066823], [-0.3, 1.7275147, -3.4648232, -1.5574636]]
DCT2O = [[0.9, -1.1272264, 0.1, 1.9822615], [-0.075, 0.6107687, -1.225, -0.5506465]]
IDCT2 = [[1.4468731, -4.7402987, -0.3165555, 4.8099812],
         [1.0144155, 2.034176, -2.9755974, -1.6729941]]
DCT3 = [[1.4468731, -4.7402987, -0.3165555, 4.8099812],
        [1.0144155, 2.034176, -2.9755974, -1.6729941]]
DCT3O = [[0.5554809, -1.6320147, -0.0679853, 1.7445191],
         [0.3000714, 0.6606112, -1.1106112, -0.6500714]]
IDCT3 = [[3.6, -3.1882776, 0.2828427, 5.6066823], [-0.3, 1.7275147, -3.4648232, -1.5574636]]
DCT4 = [[1.0883515, -3.7338409, 4.6316456, 3.4032018],
        [0.7489994, -0.1924265, -4.0793201, 0.4702337]]
DCT4O = [[0.3847904, -1.3201121, 1.637534, 1.2032135],
         [0.2648113, -0.068033, -1.4422574, 0.1662527]]
IDCT4 = [[1.0883515, -3.7338409, 4.6316456, 3.4032018],
         [0.7489994, -0.1924265, -4.0793201, 0.4702337]]
DCT_N3 = [[2.2, -2.9444864, 4.7], [1.5, -0.7794229, -2.55]]
DCT_N6 = [[3.6, -0.4445713, -4.1569219, 0.2828427, 5.4, 4.3637549],
          [-0.3, 1.2746504, 0.7794229, -3.4648232, -3.45, 0.0725689]]
MFCC = [[1.2727922, -1.1272264, 0.1, 1.9822615], [-0.106066, 0.6107687, -1.225, -0.5506465]]
FFT = ([[1.0999999046325684, 0.8093268275260925, -1.009326696395874],
        [1.4000000953674316, 1.5624353885650635, -0.862435519695282]],
       [[0.75, 1.7962812185287476, -3.746281147003174],
        [0.9000000953674316, -0.5009618997573853, -3.0990381240844727]])
IFFT = ([[0.3666665852069855, -0.3364422023296356, 0.2697755992412567],
         [0.46666669845581055, -0.287478506565094, 0.5208117961883545]],
        [[0.25, -1.248760461807251, 0.5987604260444641],
         [0.30000001192092896, -1.0330127477645874, -0.16698729991912842]])
FFT2D = ([[2.5, 2.371762275695801, -1.8717621564865112],
          [-0.3000001907348633, -0.7531086206436157, -0.14689120650291443]],
         [[1.6500000953674316, 1.2953193187713623, -6.8453192710876465],
          [-0.15000009536743164, 2.297243118286133, -0.6472430229187012]])
IFFT2D = ([[0.4166666865348816, -0.3119603991508484, 0.3952937126159668],
           [-0.05000000074505806, -0.02448190003633499, -0.1255180984735489]],
          [[0.2750000059604645, -1.1408865451812744, 0.21588659286499023],
           [-0.02500000037252903, -0.10787390172481537, 0.38287389278411865]])
FFT3D = ([[[2.5, 2.371762275695801, -1.8717621564865112],
           [-0.3000001907348633, -0.7531086206436157, -0.14689120650291443]]],
         [[[1.6500000953674316, 1.2953193187713623, -6.8453192710876465],
           [-0.15000009536743164, 2.297243118286133, -0.6472430229187012]]])
IFFT3D = ([[[0.4166666865348816, -0.3119603991508484, 0.3952937126159668],
            [-0.05000000074505806, -0.02448190003633499, -0.1255180984735489]]],
          [[[0.2750000059604645, -1.1408865451812744, 0.21588659286499023],
            [-0.02500000037252903, -0.10787390172481537, 0.38287389278411865]]])
RFFT6 = ([[1.4000000953674316, -1.7999999523162842, 0.800000011920929, 2.4000000953674316],
          [2.049999952316284, -0.12499990314245224, 3.0250000953674316, -1.25]],
         [[0.0, -1.0392303466796875, 3.1176915168762207, 0.0],
          [0.0, 0.9093266725540161, -0.9959291815757751, 0.0]])
RFFT4 = ([[1.7999999523162842, -1.7000000476837158, 2.799999952316284],
          [1.850000023841858, 2.0, -1.4499999284744263]],
         [[0.0, 1.899999976158142, 0.0], [0.0, 1.5500000715255737, 0.0]])
RFFT = ([[1.4000000953674316, -2.3787732124328613, 2.4287734031677246],
         [2.0500001907348633, 0.6109424233436584, 1.1140576601028442]],
        [[0.0, -0.003275499911978841, 1.706601619720459],
         [0.0, 1.61212158203125, -2.289473533630371]])
RFFT2D = ([[3.450000286102295, -1.7678308486938477, 3.5428307056427],
           [-0.6500000953674316, -2.989715576171875, 1.3147157430648804]],
          [[0.0, 1.6088460683822632, -0.5828719139099121],
           [0.0, -1.6153970956802368, 3.99607515335083]])
RFFT2D_34 = ([[3.6500000953674316, 0.30000001192092896, 1.350000023841858],
              [0.8749998807907104, -1.3576606512069702, 3.5250000953674316],
              [0.8749998807907104, -4.042339324951172, 3.5250000953674316]],
             [[0.0, 3.450000286102295, 0.0],
              [-1.6021469831466675, -0.6070507764816284, 1.2557367086410522],
              [1.6021469831466675, 2.857050895690918, -1.2557367086410522]])
RFFT3D = ([[[1.6500000953674316, 2.25], [-2.0500001907348633, -2.25]],
           [[1.9499998092651367, 3.3499999046325684], [-5.150000095367432, 2.6500000953674316]]],
          [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
IRFFT = [[-0.02500000037252903, -0.9750000238418579, 1.1749999523162842, 0.125],
         [0.25, -0.8999999761581421, 0.6499999761581421, 0.699999988079071]]
IRFFT5 = [[0.3799999952316284, -1.1657623052597046, 0.45593738555908203, 0.9351462125778198,
           -0.30532118678092957],
          [0.41999998688697815, -0.9211091995239258, 0.10531219840049744, 0.7055081725120544,
           0.3902888000011444]]
IRFFT2D = [[0.11249999701976776, -0.9375, 0.9125000238418579, 0.4124999940395355],
           [-0.13750000298023224, -0.03750000149011612, 0.26249998807907104, -0.2874999940395355]]
IRFFT2D_33 = [[-0.24444440007209778, -0.23072640597820282, 0.8085041046142578],
              [-0.44909539818763733, 0.3550497889518738, 0.3371864855289459],
              [-0.006460200063884258, -0.2594088017940521, -0.010605400428175926]]
IRFFT3D = [[[0.11249999701976776, -0.9375, 0.9125000238418579, 0.4124999940395355],
            [-0.13750000298023224, -0.03750000149011612, 0.26249998807907104,
             -0.2874999940395355]]]
FFTSHIFT = [[1.6, 0.2, 1.1, 0.05, -0.9], [0.7, -0.4, 0.3, -1.2, 2.0]]
IFFTSHIFT1 = [[2.0, 0.7, -0.4, 0.3, -1.2], [-0.9, 1.6, 0.2, 1.1, 0.05]]
IFFTSHIFT = [[-0.9, 1.6, 0.2, 1.1, 0.05], [2.0, 0.7, -0.4, 0.3, -1.2]]
G_STFT = [0.0, -0.2615399, 6.3467933, 3.3664409, 0.7445656, 3.7920949, 1.666952, -2.4557209,
          0.7016176, 0.0]
G_MFCC = [0.0, 0.5665549, -2.3854942, 7.1722523, 30.9552286, -13.153284, -0.5414477, 6.1421805,
          -4.2339122, -103.1902297]
G2_STFT = [0.0, -5.45, 256.0, 24.25, -51.2, 34.2, 6.4, -19.35, 204.8, -3.15]
G_FFT = ([[-0.5179625, 2.5938949, -0.8365914], [1.7009076, 2.1670542, -0.0826587]],
         [[2.6887977, -0.4520642, -0.6417283], [4.3323493, 2.45756, 2.3934998]])
G_IFFT = ([[0.4982773, -1.1562597, 1.071096], [0.1601848, 0.2708237, 0.8307592]],
          [[2.773567, -0.9588787, -1.2830198], [1.2247593, 0.731369, 1.1050081]])
G_FFT2D = ([[-2.2413757, 1.9373335, -2.4689661], [0.2656841, 2.9873432, 2.0238092]],
           [[6.2900646, -0.5025531, 0.5262907], [-0.0562162, -1.6445559, -1.4605034]])
G_IFFT2D = ([[0.2121684, -0.7738132, 0.0994767], [0.5999458, -0.2878978, 0.5674248]],
            [[1.4493908, 0.0584476, -0.455538], [1.033491, -0.6066106, -0.9537597]])
G_FFT3D = ([[-2.2413757, 1.9373335, -2.4689661], [0.2656841, 2.9873432, 2.0238092]],
           [[6.2900646, -0.5025531, 0.5262907], [-0.0562162, -1.6445559, -1.4605034]])
G_IFFT3D = ([[0.2121684, -0.7738132, 0.0994767], [0.5999458, -0.2878978, 0.5674248]],
            [[1.4493908, 0.0584476, -0.455538], [1.033491, -0.6066106, -0.9537597]])
G_IRFFT = ([[1.760625, -2.07, 0.31125], [1.33875, -0.54, -0.61125]],
           [[0.0, -1.4025, 0.0], [0.0, -0.48, 0.0]])
G_IRFFT2D = ([[0.7748438, -0.6525, -0.075], [0.6459375, -0.5775, -0.0778125]],
             [[0.0, -0.470625, 0.0], [0.0, -0.5925, 0.0]])
G_RFFT = [[3.2792039, -2.0680212, 9.9529906, -0.2931402, -1.9969134],
          [3.2155368, 2.144097, -2.5340519, 2.3239037, 5.5888801]]
G_RFFT8 = [[5.8441128, -5.8024611, 10.6146061, 2.5236141, 2.4094503],
           [2.9540434, 0.3820658, -2.0324376, 8.2917027, 5.1104027]]
G_RFFT2D = [[4.6016125, -5.5266261, 16.7682758, -2.4556288, -5.503695],
            [5.2014172, 4.209547, -3.5464643, 3.4685309, 10.6442942]]
G_RFFT2D_36 = [[12.262505, -12.7183046, 24.2855944, 15.8917723, -5.6697829],
               [8.9111398, 5.3811357, -3.6404272, 14.3927014, 4.631514]]
G_OLA_FRAME = [[0.87, 5.92, 25.6, 2.07, 1.56], [5.93, 2.315, 3.83, 16.76, 0.52]]
G_DCT = [[39.0913401, -92.9946106, 172.9126023, 52.2518079, -10.8680101],
         [77.2017345, 23.1371484, -65.081761, 147.0490104, 20.2234415]]
G_ISTFT = [[0.0, -0.6, 4.0, 1.4, -0.8], [2.2, 0.1, -1.8, 3.2, 0.1]]

# MDCT of WAVE (frame_length 8; see test_mdct for the variants)
MDCT = [[-2.7667535, 3.3282526, -0.2203888, 0.2404152],
        [-3.1105882, -3.5021833, -0.5419088, -0.3578802],
        [-9.9372035, 2.8546806, -0.5678944, 0.161173],
        [-5.4537267, -1.5598017, -0.9557955, -0.3598169],
        [-15.8007122, 1.1364222, -0.9572214, -0.0382518]]
MDCT_ORTHO = [[-0.4942931, 0.7880086, -0.0409914, -0.1295665],
              [-1.8767692, -1.465704, 0.665989, 0.5925039],
              [-3.018266, 0.3050234, 0.0799475, 0.0492975],
              [-2.3005439, -1.7668939, 1.1380196, 0.9109752],
              [-3.3025357, 0.231549, 0.1456635, 0.1018984],
              [1.1180896, -2.2848565, 1.5163688, -0.201273]]
MDCT_KBD = [[-2.8883082, 3.4072976, -0.3874504, 0.4441792],
            [-2.7817568, -3.3091943, -0.6732404, -0.5065304],
            [-9.9128008, 3.0499006, -0.8280578, 0.3748541],
            [-5.2120824, -1.0411813, -1.4262101, -0.334983],
            [-15.5700703, 1.4849301, -1.3198948, 0.1216549]]
IMDCT = [-0.0693767, -0.3271653, 0.6210694, 1.1590567, 0.7349882, 0.1492168, -0.2715758,
         -0.2824526, 0.1687334, 0.9168139, 1.6569866, 2.0881682, 2.0545989, 1.6190984, 1.0335209,
         0.6203042, 0.6208223, 1.0818629, 1.833623, 2.5695698, 3.0943211, 3.3380444, 1.7584062,
         0.1852143]
IMDCT_ORTHO = [-2.3222624, -1.4039436, 1.4039436, 2.3222624, 2.0853234, 0.6305375, -0.6087486,
               0.7818714, -3.5623148, 1.0893874, 5.2442782, 4.7351086, 3.1831114, 3.5087715,
               4.1479732, 5.1688523, -3.5092846, 1.3873794, 5.8596915, 6.6022567, 6.1997184,
               7.5457358, 7.5457358, 6.1997184]
G_MDCT = [-2.8629845, -11.4825341, 21.797699, 47.8310397, 26.2694497, -0.3952362, -20.4462641,
          -23.8125533, -17.5047928, -37.5165333, 211.3972529, 567.9869299, 813.6247517,
          820.3968965, 466.3204833, 135.4620931, 1.9677321, -215.4175008, 758.1204165,
          2197.2924914, 3273.5861446, 3422.4896409, 1802.8900201, 195.9444455]

def _close(actual, expected, atol=1e-6):
    if isinstance(expected, tuple):
        expected = np.asarray(expected[0]) + 1j * np.asarray(expected[1])
    actual = actual.numpy() if hasattr(actual, "numpy") else actual
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6, atol=atol)


def _grad(f, x):
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = f(v)
    return tape.gradient(loss, v)


def _numeric_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[k] += eps
        lo[k] -= eps
        out[k] = (float(f(tf.constant(hi))) - float(f(tf.constant(lo)))) / (2 * eps)
    return out


# --- DFTs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fft", "ifft", "fft2d", "ifft2d"])
def test_complex_dfts(name):
    out = getattr(tf.signal, name)(Z)
    assert out.dtype is tf.complex128
    _close(out, globals()[name.upper()])


def test_3d_dfts_and_complex64():
    _close(tf.signal.fft3d(Z.reshape(1, 2, 3)), FFT3D)
    _close(tf.signal.ifft3d(Z.reshape(1, 2, 3)), IFFT3D)
    single = tf.signal.fft(tf.cast(tf.constant(Z), tf.complex64))
    assert single.dtype is tf.complex64
    _close(single, FFT, atol=1e-5)


def test_real_dfts():
    _close(tf.signal.rfft(XR), RFFT)
    _close(tf.signal.rfft(XR, fft_length=[6]), RFFT6)
    _close(tf.signal.rfft(XR, fft_length=tf.constant([4])), RFFT4)
    _close(tf.signal.rfft2d(XR), RFFT2D)
    _close(tf.signal.rfft2d(XR, fft_length=[3, 4]), RFFT2D_34)
    _close(tf.signal.rfft3d(X[:8].reshape(2, 2, 2)), RFFT3D)
    assert tf.signal.rfft(tf.constant(XR, tf.float32)).dtype is tf.complex64
    out = tf.signal.irfft(Z)
    assert out.dtype is tf.float64 and out.shape == (2, 4)
    _close(out, IRFFT)
    _close(tf.signal.irfft(Z, fft_length=[5]), IRFFT5)
    _close(tf.signal.irfft2d(Z), IRFFT2D)
    _close(tf.signal.irfft2d(Z, fft_length=[3, 3]), IRFFT2D_33)
    _close(tf.signal.irfft3d(Z.reshape(1, 2, 3)), IRFFT3D)


def test_shifts():
    _close(tf.signal.fftshift(XR), FFTSHIFT)
    _close(tf.signal.ifftshift(XR), IFFTSHIFT)
    _close(tf.signal.ifftshift(XR, axes=1), IFFTSHIFT1)
    x = tf.range(7)
    assert tf.signal.ifftshift(tf.signal.fftshift(x)).numpy().tolist() == list(range(7))
    assert tf.signal.fftshift(x).numpy().tolist() == [4, 5, 6, 0, 1, 2, 3]   # numpy's rule


def test_dft_errors():
    with pytest.raises(TypeError, match="fft: expected a complex64 or complex128 tensor, got "
                                        "float32"):
        tf.signal.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="rfft: expected a float32 or float64 tensor, got "
                                        "complex128"):
        tf.signal.rfft(tf.constant([1j]))
    with pytest.raises(ValueError, match="fft2d: input must have rank at least 2, got shape"):
        tf.signal.fft2d(tf.constant([1j]))
    with pytest.raises(ValueError, match="rfft2d: fft_length must hold 2 non-negative"):
        tf.signal.rfft2d(XR, fft_length=[4])
    with pytest.raises(ValueError, match="fftshift: axis 2 is out of range for rank 2"):
        tf.signal.fftshift(XR, axes=2)


# --- framing and STFT ------------------------------------------------------------------------

def test_frame():
    # hand-computed: frames of 4 samples, 3 apart
    assert tf.signal.frame(X, 4, 3).numpy().tolist() == [
        [0.3, -1.2, 2.0, 0.7], [0.7, -0.4, 1.1, 0.05], [0.05, -0.9, 1.6, 0.2]]
    assert tf.signal.frame(X, 4, 3, pad_end=True, pad_value=9).numpy().tolist()[-1] == [
        0.2, 9.0, 9.0, 9.0]
    assert tf.signal.frame(X.reshape(10, 1), 3, 4, axis=0).shape == (2, 3, 1)
    assert tf.signal.frame(XR, 2, 2).numpy().tolist() == [
        [[0.3, -1.2], [2.0, 0.7]], [[1.1, 0.05], [-0.9, 1.6]]]
    assert tf.signal.frame(X, 20, 3).shape == (0, 20)
    with pytest.raises(ValueError, match="frame: frame_length must be at least 1, got 0"):
        tf.signal.frame(X, 0, 1)
    with pytest.raises(ValueError, match="frame: axis 1 is out of range for a signal of rank 1"):
        tf.signal.frame(X, 2, 1, axis=1)


def test_overlap_and_add():
    # hand-computed: frames of 5 (3) samples placed 2 (4) apart and summed
    _close(tf.signal.overlap_and_add(XR, 2), [0.3, -1.2, 3.1, 0.75, -1.3, 1.6, 0.2])
    _close(tf.signal.overlap_and_add(X[:9].reshape(3, 3), 4),
           [0.3, -1.2, 2.0, 0.0, 0.7, -0.4, 1.1, 0.0, 0.05, -0.9, 1.6])
    assert tf.signal.overlap_and_add(np.ones((2, 3, 4)), 4).shape == (2, 12)
    with pytest.raises(ValueError, match="overlap_and_add: signal must have rank at least 2"):
        tf.signal.overlap_and_add(X, 2)


def test_stft_and_inverse():
    s = tf.signal.stft(tf.constant(X), 6, 3, fft_length=8)
    assert s.dtype is tf.complex128 and s.shape == (2, 5)
    _close(s, STFT)
    assert tf.signal.stft(tf.constant(X, tf.float32), 5, 2).shape == (3, 5)   # fft_length 8
    assert tf.signal.stft(tf.constant(X, tf.float32), 5, 2).dtype is tf.complex64
    back = tf.signal.inverse_stft(s, 6, 3, fft_length=8,
                                  window_fn=tf.signal.inverse_stft_window_fn(3))
    _close(back, ISTFT)
    _close(back[3:7], X[3:7])   # the fully overlapped samples come back
    with pytest.raises(TypeError, match="stft: signals must be float32 or float64, got int32"):
        tf.signal.stft(tf.constant([1, 2, 3]), 2, 1)


def test_audio_tutorial_spectrogram():
    # TF's "Simple audio recognition" tutorial: a 1 s clip at 16 kHz gives (124, 129, 1).
    waveform = np.sin(np.linspace(0.0, 900.0, 16000)).astype(np.float32)
    spectrogram = tf.abs(tf.signal.stft(waveform, frame_length=255, frame_step=128))
    spectrogram = spectrogram[..., tf.newaxis]
    assert spectrogram.shape == (124, 129, 1) and spectrogram.dtype is tf.float32
    # reference: numpy's rfft of frames times TF's hann window (for an odd length the
    # "periodic" window equals the symmetric one: n runs over length - 1)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(255) / 254)
    frames = np.stack([waveform[k * 128:k * 128 + 255] for k in range(124)]) * window
    expected = np.abs(np.fft.rfft(frames.astype(np.float64), 256))
    np.testing.assert_allclose(spectrogram.numpy()[..., 0], expected, rtol=1e-3, atol=2e-3)
    step = tf.function(lambda w: tf.abs(tf.signal.stft(w, frame_length=255, frame_step=128)))
    np.testing.assert_allclose(step(waveform).numpy(), spectrogram.numpy()[..., 0], atol=1e-5)


# --- windows and mel -------------------------------------------------------------------------

def test_windows():
    assert tf.signal.hann_window(4).dtype is tf.float32
    _close(tf.signal.hann_window(5), HANN5)
    _close(tf.signal.hann_window(6), HANN6)
    _close(tf.signal.hann_window(6, periodic=False), HANN6S)
    _close(tf.signal.hamming_window(6), HAMMING6)
    _close(tf.signal.hamming_window(6, periodic=False), HAMMING6S)
    _close(tf.signal.kaiser_window(6, beta=4.0), KAISER)
    _close(tf.signal.kaiser_window(5), KAISER5)
    _close(tf.signal.kaiser_bessel_derived_window(6, beta=4.0), KBD)
    _close(tf.signal.vorbis_window(5), VORBIS)
    assert tf.signal.hann_window(1).numpy().tolist() == [1.0]
    assert tf.signal.hann_window(3, dtype=tf.float64).dtype is tf.float64
    with pytest.raises(ValueError, match="hann_window: dtype must be a floating point type, "
                                         "got int32"):
        tf.signal.hann_window(3, dtype=tf.int32)


def test_linear_to_mel_weight_matrix():
    _close(tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 3000.0), MEL)
    default = tf.signal.linear_to_mel_weight_matrix()
    assert default.shape == (129, 20) and default.dtype is tf.float32
    with pytest.raises(ValueError, match="upper_edge_hertz 5000.0 must not exceed the Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 5000.0)
    with pytest.raises(ValueError, match="lower_edge_hertz 300.0 must be smaller than "
                                         "upper_edge_hertz 200.0"):
        tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 300.0, 200.0)
    with pytest.raises(ValueError, match="num_mel_bins must be at least 1, got 0"):
        tf.signal.linear_to_mel_weight_matrix(0)


# --- DCT and MFCC ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [1, 2, 3, 4])
def test_dct(kind):
    _close(tf.signal.dct(M, type=kind), globals()[f"DCT{kind}"])
    if kind > 1:
        _close(tf.signal.dct(M, type=kind, norm="ortho"), globals()[f"DCT{kind}O"])
        _close(tf.signal.idct(M, type=kind), globals()[f"IDCT{kind}"])
        back = tf.signal.idct(tf.signal.dct(M, type=kind, norm="ortho"), type=kind, norm="ortho")
        _close(back, M)


def test_dct_lengths_mfcc_and_errors():
    _close(tf.signal.dct(M, n=3), DCT_N3)
    _close(tf.signal.dct(M, n=6), DCT_N6)
    _close(tf.signal.mfccs_from_log_mel_spectrograms(M), MFCC)
    assert tf.signal.dct(tf.constant(M, tf.float32)).dtype is tf.float32
    with pytest.raises(ValueError, match="dct: type must be 1, 2, 3 or 4, got 5"):
        tf.signal.dct(M, type=5)
    with pytest.raises(ValueError, match="dct: norm='ortho' is not supported for type 1"):
        tf.signal.dct(M, type=1, norm="ortho")
    with pytest.raises(ValueError, match="dct: norm must be None or 'ortho', got 'forward'"):
        tf.signal.dct(M, norm="forward")
    with pytest.raises(NotImplementedError, match="dct: only axis=-1 is supported, got axis=0"):
        tf.signal.dct(M, axis=0)
    with pytest.raises(TypeError, match="dct: input must be float32 or float64, got int32"):
        tf.signal.dct([1, 2])


# --- gradients -------------------------------------------------------------------------------

def test_stft_gradients():
    _close(_grad(lambda v: tf.reduce_sum(tf.abs(tf.signal.stft(v, 6, 3, fft_length=8)) ** 1.5),
                 X), G_STFT)

    def mfcc_loss(v):
        mel = tf.signal.linear_to_mel_weight_matrix(3, 3, 100, 5.0, 40.0, dtype=tf.float64)
        spec = tf.abs(tf.signal.stft(v, 4, 2, pad_end=True))
        mfcc = tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(tf.matmul(spec, mel) + 1e-2))
        return tf.reduce_sum(mfcc ** 2)
    _close(_grad(mfcc_loss, X), G_MFCC, atol=2e-5)

    v = tf.Variable(X)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(tf.abs(tf.signal.stft(v, 4, 2, fft_length=6)) ** 2)
        g = inner.gradient(loss, v)
        norm = tf.reduce_sum(g * g)
    _close(outer.gradient(norm, v), G2_STFT, atol=2e-5)


@pytest.mark.parametrize("name", ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d"])
def test_complex_dft_gradients(name):
    def loss(v):
        y = getattr(tf.signal, name)(tf.reshape(v, (1, 2, 3)))[0]
        return tf.reduce_sum(tf.abs(y) * W) + tf.reduce_sum(tf.math.imag(y) * W * W)
    _close(_grad(loss, ZV), globals()["G_" + name.upper()])


def test_real_dft_gradients():
    for name in ("irfft", "irfft2d"):
        _close(_grad(lambda v: tf.reduce_sum(getattr(tf.signal, name)(v) ** 3), ZV),
               globals()["G_" + name.upper()])
    for key, fn, kwargs in [("RFFT", tf.signal.rfft, {}), ("RFFT8", tf.signal.rfft,
                                                           {"fft_length": [8]}),
                            ("RFFT2D", tf.signal.rfft2d, {}),
                            ("RFFT2D_36", tf.signal.rfft2d, {"fft_length": [3, 6]})]:
        def loss(v):
            y = fn(v, **kwargs)
            return tf.reduce_sum(tf.abs(y) ** 1.5) + tf.reduce_sum(tf.math.real(y) *
                                                                    tf.math.imag(y))
        _close(_grad(loss, XR), globals()["G_" + key])


def test_cropping_rfft2d_gradient_matches_finite_differences():
    # TF 2.21 cannot differentiate this one (its gradient hits a shape mismatch)
    def loss(v):
        y = tf.signal.rfft2d(v, fft_length=[3, 4])
        return tf.reduce_sum(tf.abs(y) ** 1.5) + tf.reduce_sum(tf.math.real(y) * tf.math.imag(y))
    np.testing.assert_allclose(_grad(loss, XR).numpy(), _numeric_grad(loss, XR), atol=1e-5)
    cube = X[:8].reshape(2, 2, 2)

    def loss3(v):
        return tf.reduce_sum(tf.signal.irfft3d(tf.signal.rfft3d(v) * (1 + 0.5j)) ** 3)
    np.testing.assert_allclose(_grad(loss3, cube).numpy(), _numeric_grad(loss3, cube), atol=1e-5)


def test_frame_dct_istft_gradients():
    def frames(v):
        return (tf.reduce_sum(tf.signal.overlap_and_add(tf.reshape(v, (5, 2)), 1) ** 2) +
                tf.reduce_sum(tf.signal.frame(tf.reshape(v, [-1]), 3, 2, pad_end=True) ** 3))
    _close(_grad(frames, XR), G_OLA_FRAME)

    def dcts(v):
        return (sum(tf.reduce_sum(tf.signal.dct(v, type=k) ** 2) for k in (1, 2, 3, 4)) +
                tf.reduce_sum(tf.signal.idct(v, norm="ortho") ** 3))
    _close(_grad(dcts, XR), G_DCT, atol=1e-5)

    def istft(v):
        s = tf.signal.stft(tf.reshape(v, [-1]), 4, 2, fft_length=4)
        window = tf.signal.inverse_stft_window_fn(2)
        return tf.reduce_sum(tf.signal.inverse_stft(s, 4, 2, fft_length=4, window_fn=window) ** 2)
    _close(_grad(istft, XR), G_ISTFT)


# --- MDCT and N-d DFTs -----------------------------------------------------------------------

WAVE = np.sin(np.arange(24.0) * 0.7) + 0.1 * np.arange(24.0)


def test_mdct():
    m = tf.signal.mdct(WAVE, 8)
    assert m.shape == (5, 4)
    _close(m, MDCT)
    _close(tf.signal.mdct(WAVE[:22], 8, window_fn=None, norm="ortho", pad_end=True), MDCT_ORTHO)
    _close(tf.signal.mdct(WAVE, 8, window_fn=tf.signal.kaiser_bessel_derived_window), MDCT_KBD)
    _close(tf.signal.inverse_mdct(m), IMDCT)
    _close(tf.signal.inverse_mdct(m, window_fn=None, norm="ortho"), IMDCT_ORTHO)
    _close(tf.signal.inverse_mdct(m)[4:20], WAVE[4:20])   # time-domain aliasing cancels
    _close(_grad(lambda v: tf.reduce_sum(tf.signal.inverse_mdct(tf.signal.mdct(v, 8) ** 2) ** 2),
                 WAVE), G_MDCT, atol=1e-5)
    with pytest.raises(ValueError, match="mdct: frame_length must be a multiple of 4, got 6"):
        tf.signal.mdct(WAVE, 6)


CUBE = np.arange(12.0).reshape(2, 2, 3) + 1j * np.arange(12.0)[::-1].reshape(2, 2, 3)


def test_nd_dfts_match_numpy_fftn():
    # TF 2.21 has no CPU kernel for these; they follow numpy.fft's fftn/rfftn conventions
    _close(tf.signal.fftnd(CUBE), np.fft.fftn(CUBE), atol=1e-9)
    _close(tf.signal.fftnd(CUBE, fft_length=[3, 2], axes=[0, 2]),
           np.fft.fftn(CUBE, s=[3, 2], axes=[0, 2]), atol=1e-9)
    _close(tf.signal.fftnd(CUBE, fft_length=[3, 2]), np.fft.fftn(CUBE, s=[3, 2], axes=[1, 2]), atol=1e-9)
    _close(tf.signal.ifftnd(CUBE, fft_length=[3, 2], axes=[0, 2]),
           np.fft.ifftn(CUBE, s=[3, 2], axes=[0, 2]), atol=1e-9)
    cube = np.arange(12.0).reshape(2, 2, 3) ** 1.3
    _close(tf.signal.rfftnd(cube), np.fft.rfftn(cube), atol=1e-9)
    _close(tf.signal.rfftnd(cube, fft_length=[3, 4], axes=[2, 0]),
           np.fft.rfftn(cube, s=[3, 4], axes=[2, 0]), atol=1e-9)
    _close(tf.signal.irfftnd(CUBE), np.fft.irfftn(CUBE), atol=1e-9)
    _close(tf.signal.irfftnd(CUBE, fft_length=[3, 4], axes=[0, 2]),
           np.fft.irfftn(CUBE, s=[3, 4], axes=[0, 2]), atol=1e-9)
    with pytest.raises(ValueError, match="fftnd: axis 3 is out of range for rank 3"):
        tf.signal.fftnd(CUBE, axes=[3])
    with pytest.raises(ValueError, match="fftnd: fft_length \\[2\\] and axes \\[0, 1\\] differ"):
        tf.signal.fftnd(CUBE, fft_length=[2], axes=[0, 1])
    with pytest.raises(ValueError, match="fftnd: only norm=None"):
        tf.signal.fftnd(CUBE, norm="ortho")


def test_nd_dft_gradients_match_finite_differences():
    cube = np.cos(np.arange(12.0)).reshape(2, 2, 3)

    def loss(v):
        y = tf.signal.rfftnd(v, fft_length=[3, 4], axes=[0, 2])
        z = tf.signal.fftnd(y * (0.5 - 1j), axes=[1, 2])
        return tf.reduce_sum(tf.abs(z) ** 1.5) + tf.reduce_sum(
            tf.signal.irfftnd(z, fft_length=[2, 3], axes=[0, 1]) ** 2)
    np.testing.assert_allclose(_grad(loss, cube).numpy(), _numeric_grad(loss, cube), atol=1e-5)
