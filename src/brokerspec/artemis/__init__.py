"""Real Apache ActiveMQ Artemis brokers as systems under test."""
