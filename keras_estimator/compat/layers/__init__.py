"""keras_estimator's `tf.compat.v1.layers` for Keras 3 (TF1 names, get_variable based)."""

from keras_estimator.compat.layers.base import Layer
from keras_estimator.compat.layers.convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    SeparableConv2D,
    conv1d,
    conv2d,
    conv2d_transpose,
    conv3d,
    separable_conv2d,
)
from keras_estimator.compat.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from keras_estimator.compat.layers.normalization import BatchNormalization, batch_normalization
from keras_estimator.compat.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    average_pooling1d,
    average_pooling2d,
    average_pooling3d,
    max_pooling1d,
    max_pooling2d,
    max_pooling3d,
)

# TF1 aliases.
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D

__all__ = [
    "Layer", "Dense", "Dropout", "Flatten", "dense", "dropout", "flatten",
    "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "SeparableConv2D",
    "conv1d", "conv2d", "conv3d", "conv2d_transpose", "separable_conv2d",
    "Convolution1D", "Convolution2D", "Convolution3D", "Convolution2DTranspose",
    "SeparableConvolution2D",
    "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
    "AvgPool3D", "max_pooling1d", "max_pooling2d", "max_pooling3d", "average_pooling1d",
    "average_pooling2d", "average_pooling3d",
    "BatchNormalization", "batch_normalization",
]  # fmt: skip
