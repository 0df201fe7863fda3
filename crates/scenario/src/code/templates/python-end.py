summary()
