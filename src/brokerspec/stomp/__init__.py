"""brokerspec's STOMP adapter: any spec operation as STOMP frames and management requests to brokerspec's broker."""
