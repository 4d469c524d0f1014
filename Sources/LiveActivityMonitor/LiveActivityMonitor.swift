// The domain module.
